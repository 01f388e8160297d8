/*
 * export_attachments.c — `strobe export FILE --attachments DIR`: writes
 * every attachment of a capture (strobe/deep.h: screenshots, scene
 * snapshots, resource contents) into DIR as one file each, named by frame
 * and resource only (frame-F-resource-R.EXT: digits and a fixed extension
 * per media type, never a name taken from the capture), plus DIR/index.tsv
 * listing every attachment record (docs/cli.md §strobe export).
 *
 * An attachment of a resource stored earlier in the capture (content is
 * stored once per resource) becomes a hard link to the first file, so each
 * frame lists all it used without repeating bytes; one cut by the capture's
 * bound has no file and is counted, in index.tsv and on stderr.
 *
 * Must never: write outside DIR, write through a link planted in DIR (each
 * file is created anew, O_CREAT|O_EXCL|O_NOFOLLOW, after removing what held
 * its name: a hard link to a file elsewhere is unlinked, never written into),
 * use a DIR that holds anything unless forced, or use DIR when it exists as
 * anything but a directory (a regular file, a FIFO, a device: refused with
 * what it is).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"

/* The file extension of a media type: a fixed table; anything else is .bin. */
static const char *extension(const char *media) {
  static const char *const table[][2] = {
      {"image/png", "png"},          {"image/jpeg", "jpg"},   {"application/json", "json"},
      {"text/plain", "txt"},         {STROBE_MEDIA_ARGB32, "argb32"}, {STROBE_MEDIA_A8, "a8"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(media, table[i][0])) return table[i][1];
  return "bin";
}

static const char *what_is(const struct stat *st) {
  if (S_ISREG(st->st_mode)) return "a regular file";
  if (S_ISFIFO(st->st_mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(st->st_mode)) return "a socket";
  if (S_ISCHR(st->st_mode)) return "a character device";
  if (S_ISBLK(st->st_mode)) return "a block device";
  if (S_ISLNK(st->st_mode)) return "a symbolic link";
  return "not a directory";
}

/* The first file written for each resource id, to link repeats to. */
typedef struct first_file {
  uint64_t resource;
  char name[96];
} first_file;

/* 1 when dir holds an entry besides . and .., or cannot be listed. */
static int holds_anything(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 1;
  struct dirent *e;
  int any = 0;
  while (!any && (e = readdir(d)))
    any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return any;
}

/* A new file at full: whatever held the name (a file of an earlier export, or a hard link planted to a file
 * elsewhere) is unlinked first, and the file is created exclusively, so no byte goes through an old inode.
 * Returns the descriptor, or -1 with errno set. */
static int create_new(const char *full) {
  if (unlink(full) != 0 && errno != ENOENT) return -1;
  return open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static int write_all(int fd, const uint8_t *p, uint64_t n) {
  while (n) {
    ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : (size_t)n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (uint64_t)w;
  }
  return 0;
}

int export_attachments(const char *path, const char *dir, int force, int quiet) {
  struct stat st;
  if (lstat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      cli_error("export", "%s exists and is %s, not a directory: refused (give a new or existing directory)", dir,
                what_is(&st));
      return CLI_USAGE;
    }
    if (!force && holds_anything(dir)) {
      cli_error("export", "%s is not empty: refused (a file there may be a link to one elsewhere); give a new or "
                "empty directory, or --force to replace the files of the names it writes", dir);
      return CLI_USAGE;
    }
  } else if (errno != ENOENT || mkdir(dir, 0755) != 0) {
    cli_error("export", "cannot create the directory %s: %s", dir, strerror(errno));
    return CLI_OUTPUT;
  }
  cli_input in;
  int rc = cli_open(&in, "export", path, quiet);
  if (rc) return rc;
  char index_path[4200];
  snprintf(index_path, sizeof index_path, "%s/index.tsv", dir);
  int ifd = create_new(index_path);
  FILE *index = ifd >= 0 ? fdopen(ifd, "w") : NULL;
  if (!index) {
    cli_error("export", "cannot write %s: %s", index_path, strerror(errno));
    if (ifd >= 0) close(ifd);
    cli_close(&in);
    return CLI_OUTPUT;
  }
  fputs("frame\tresource\tmedia_type\twidth\theight\tbytes\tstate\tfile\n", index);
  first_file *firsts = NULL;
  size_t nfirst = 0, cap = 0;
  uint64_t files = 0, links = 0, cut = 0, cut_bytes = 0, bytes = 0, missing = 0;
  int out_rc = CLI_OK;
  strobe_capture_record rec;
  while (out_rc == CLI_OK && cli_next(&in, &rec) > 0) {
    if (rec.type != STROBE_REC_ATTACHMENT) continue;
    const strobe_capture_attachment *a = rec.attachment;
    char name[96] = "-";
    const char *state = "stored";
    if (a->state == STROBE_CAPTURE_ATTACH_CUT) {
      state = "cut";
      cut++;
      cut_bytes += a->size;
    } else {
      snprintf(name, sizeof name, "frame-%" PRIu64 "-resource-%016" PRIx64 ".%s", a->frame, a->resource,
               extension(a->media_type));
      char full[4200];
      snprintf(full, sizeof full, "%s/%s", dir, name);
      if (a->state == STROBE_CAPTURE_ATTACH_STORED) {
        int fd = create_new(full);
        if (fd < 0 || write_all(fd, a->bytes, a->size) != 0) {
          cli_error("export", "cannot write %s: %s", full, strerror(errno));
          out_rc = CLI_OUTPUT;
        }
        if (fd >= 0 && close(fd) != 0 && out_rc == CLI_OK) {
          cli_error("export", "cannot write %s: %s", full, strerror(errno));
          out_rc = CLI_OUTPUT;
        }
        files++;
        bytes += a->size;
        if (nfirst == cap) {
          cap = cap ? cap * 2 : 64;
          first_file *p = realloc(firsts, cap * sizeof *p);
          if (!p) {
            cli_error("export", "out of memory");
            out_rc = CLI_FAIL;
            break;
          }
          firsts = p;
        }
        firsts[nfirst].resource = a->resource;
        snprintf(firsts[nfirst].name, sizeof firsts[nfirst].name, "%s", name);
        nfirst++;
      } else { /* stored earlier: a hard link to that file */
        state = "earlier";
        const char *first = NULL;
        for (size_t i = nfirst; i-- > 0;)
          if (firsts[i].resource == a->resource) {
            first = firsts[i].name;
            break;
          }
        if (!first) { /* its content came before this capture's start (a damaged or spliced file) */
          state = "missing";
          missing++;
          snprintf(name, sizeof name, "-");
        } else if (strcmp(first, name) != 0) {
          char from[4200];
          snprintf(from, sizeof from, "%s/%s", dir, first);
          (void)unlink(full); /* a re-export replaces its own earlier link */
          if (link(from, full) != 0) {
            cli_error("export", "cannot link %s to %s: %s", full, from, strerror(errno));
            out_rc = CLI_OUTPUT;
          }
          links++;
        }
      }
    }
    fprintf(index, "%" PRIu64 "\t%016" PRIx64 "\t%s\t%u\t%u\t%" PRIu64 "\t%s\t%s\n", a->frame, a->resource,
            a->media_type, a->width, a->height, a->size, state, name);
  }
  free(firsts);
  int read_rc = cli_finish_read(&in);
  cli_close(&in);
  if (fclose(index) != 0 && out_rc == CLI_OK) {
    cli_error("export", "cannot write %s: %s", index_path, strerror(errno));
    out_rc = CLI_OUTPUT;
  }
  fprintf(stderr, "strobe export: %" PRIu64 " attachment files (%" PRIu64 " bytes) and %" PRIu64
                  " links to resources stored earlier written to %s (index.tsv lists them)\n",
          files, bytes, links, dir);
  if (cut)
    fprintf(stderr, "strobe export: %" PRIu64 " attachments (%" PRIu64
                    " bytes) were cut by the capture's content bound: not in the capture, no file\n",
            cut, cut_bytes);
  if (missing)
    fprintf(stderr, "strobe export: %" PRIu64 " attachments name content stored before the part read: no file\n", missing);
  return out_rc ? out_rc : read_rc;
}
