/*
 * cmd_clock_offset.c — `strobe clock-offset URL --token-file FILE`: this
 * host's clock against a peer's Strobe server, NTP-style over its
 * authenticated GET /api/clock (docs/cli.md §strobe clock-offset, docs/sessions.md
 * §Across hosts): the offset (peer minus here), its error bound and the
 * round trip of the best of several round trips. With --via LOCAL_URL the
 * application's own server (POST /api/clock) takes the sample and keeps it,
 * so the captures it finishes afterwards carry it and `strobe merge` can
 * align them with the peer's.
 *
 * Must never: print a token, store anything itself (a sample lives in the
 * captures of the process that took it), or report a sample from an answer
 * the library refused.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/json_writer.h"
#include "io/http_client.h"
#include "platform/io.h"

#ifdef STROBE_CLI_HAVE_SERVER
#include "strobe/server.h"
#endif

#define CMD "clock-offset"

static int usage(FILE *f) {
  fprintf(f,
          "usage: strobe clock-offset URL [--token-file FILE] [--rounds N] [--max-rtt-ms MS] [--peer NAME]\n"
          "                               [--via LOCAL_URL --via-token-file FILE] [--json]\n"
          "Measures this host's CLOCK_MONOTONIC against the Strobe server at URL (GET /api/clock, NTP-style):\n"
          "the offset (the peer's clock minus this one), its error bound (half the best round trip) and that\n"
          "round trip. Nothing is stored: with --via, the application serving LOCAL_URL (on this host) takes\n"
          "the sample itself and keeps it, and every capture it finishes afterwards carries it, so that\n"
          "`strobe merge` aligns its captures with the peer's.\n"
          "  --token-file FILE       the peer server's token (default: $STROBE_TOKEN)\n"
          "  --rounds N              round trips, 1-64 (default 8): the lowest round trip is kept\n"
          "  --max-rtt-ms MS         round trips longer than this are not kept, 1-60000 (default 1000)\n"
          "  --peer NAME             the sample's peer name (default: the URL's host:port)\n"
          "  --via LOCAL_URL         the local application's server (loopback) that samples and keeps it\n"
          "  --via-token-file FILE   that server's token (default: $STROBE_VIA_TOKEN)\n"
          "  --json                  the sample as JSON\n");
  return f == stdout ? CLI_OK : CLI_USAGE;
}

static int token_from(const char *file, const char *env, const char *what, char out[CLI_TOKEN_MAX + 1]) {
  if (file) {
    int rc = cli_read_token(file, out);
    if (rc == STROBE__OPEN_NOT_REGULAR) return cli_refuse_not_regular(CMD, file, "the token file must be a regular file");
    if (rc) {
      cli_error(CMD, "cannot read a token from %s", file);
      return CLI_FAIL;
    }
    return CLI_OK;
  }
  const char *v = getenv(env);
  if (!v || !*v || strlen(v) > CLI_TOKEN_MAX) return cli_usage_error(CMD, "%s is required (or $%s)", what, env);
  strcpy(out, v);
  return CLI_OK;
}

static void print_sample(int json, const char *peer, const char *boot, long long offset, unsigned long long error,
                         unsigned long long rtt, unsigned long long at, unsigned rounds, const char *kept_by) {
  if (json) {
    strobe__json j = {0};
    
    strobe__json_object(&j, NULL);
    strobe__json_str(&j, "peer", peer);
    strobe__json_str(&j, "peer_boot_id", boot);
    strobe__json_int(&j, "offset_ns", offset);
    strobe__json_uint(&j, "error_ns", error);
    strobe__json_uint(&j, "rtt_ns", rtt);
    strobe__json_uint(&j, "at_mono_ns", at);
    strobe__json_uint(&j, "rounds", rounds);
    strobe__json_str(&j, "kept_by", kept_by);
    strobe__json_end(&j);
    fwrite(j.out.data, 1, j.out.len, stdout);
    fputc('\n', stdout);
    strobe__buf_free(&j.out);
    return;
  }
  printf("%s (boot %.8s): offset %+.6f ms +- %.6f ms (round trip %.6f ms, best of %u)\n", peer, boot,
         (double)offset / 1e6, (double)error / 1e6, (double)rtt / 1e6, rounds);
  printf("%s\n", kept_by ? kept_by : "not kept: use --via LOCAL_URL to have the application keep it in its captures");
}

#ifdef STROBE_CLI_HAVE_SERVER
static const char *why(int rc) {
  switch (rc) {
    case STROBE_EIO: return "unreachable: no connection to the peer's server";
    case STROBE_EPERM: return "the peer refused the token (401): give its server's token";
    case STROBE_EPEER: return "the answer is not a Strobe clock reply (status, JSON, boot id, or its times do not fit "
                              "the round trip): nothing kept";
    case STROBE_ELIMIT: return "no round trip came back within --max-rtt-ms: its error bound would be too wide";
    default: return strobe_strerror(rc);
  }
}
#endif

/* --via: the application's server samples the peer and keeps the sample. */
static int via(const char *local, const char *local_token, const char *url, const char *token, unsigned rounds,
               unsigned max_rtt_ms, const char *peer, int json) {
  cli_http_url u;
  const char *why = NULL;
  if (cli_http_parse_url(local, &u, &why)) return cli_usage_error(CMD, "--via %s: %s", local, why);
  strobe__json j = {0};
  
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "url", url);
  strobe__json_str(&j, "token", token);
  if (rounds) strobe__json_uint(&j, "rounds", rounds);
  if (max_rtt_ms) strobe__json_uint(&j, "max_rtt_ms", max_rtt_ms);
  if (peer) strobe__json_str(&j, "peer", peer);
  strobe__json_end(&j);
  char headers[CLI_TOKEN_MAX + 64];
  snprintf(headers, sizeof headers, "Authorization: Bearer %s\r\nContent-Type: application/json\r\n", local_token);
  cli_http_response r;
  int timeout = (int)((rounds ? rounds : 8) * ((max_rtt_ms ? max_rtt_ms : 1000) + 1000) + 5000);
  int rc = cli_http_request(&u, "POST", "/api/clock", headers, j.out.data, j.out.len, timeout,
                            1 << 16, &r, &why);
  memset(headers, 0, sizeof headers);
  strobe__buf_free(&j.out);
  if (rc) {
    cli_error(CMD, "%s: %s", local, why);
    return CLI_FAIL;
  }
  int status = CLI_OK;
  if (r.status != 200) {
    cli_error(CMD, "%s answered %d%s: %s", local, r.status, r.status == 401 ? " (its token is wrong)" : "", r.body);
    status = CLI_FAIL;
  } else if (json) {
    printf("%s\n", r.body);
  } else {
    printf("kept by the application at %s (its captures carry it): %s\n", local, r.body);
  }
  cli_http_response_free(&r);
  return status;
}

int cmd_clock_offset(int argc, char **argv) {
  static const struct option opts[] = {{"token-file", required_argument, NULL, 't'},
                                       {"rounds", required_argument, NULL, 'r'},
                                       {"max-rtt-ms", required_argument, NULL, 'm'},
                                       {"peer", required_argument, NULL, 'p'},
                                       {"via", required_argument, NULL, 'v'},
                                       {"via-token-file", required_argument, NULL, 'V'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *token_file = NULL, *via_url = NULL, *via_token_file = NULL, *peer = NULL;
  unsigned long rounds = 0, max_rtt_ms = 0;
  int json = 0, c;
  char *end;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 't': token_file = optarg; break;
      case 'r':
        rounds = strtoul(optarg, &end, 10);
        if (*end || rounds < 1 || rounds > 64) return cli_usage_error(CMD, "--rounds takes 1-64 (got %s)", optarg);
        break;
      case 'm':
        max_rtt_ms = strtoul(optarg, &end, 10);
        if (*end || max_rtt_ms < 1 || max_rtt_ms > 60000)
          return cli_usage_error(CMD, "--max-rtt-ms takes 1-60000 (got %s)", optarg);
        break;
      case 'p': peer = optarg; break;
      case 'v': via_url = optarg; break;
      case 'V': via_token_file = optarg; break;
      case 'j': json = 1; break;
      case 'h': return usage(stdout);
      default: return cli_bad_option(CMD, argv, optind);
    }
  }
  if (argc - optind != 1) return cli_usage_error(CMD, "expected the peer server's URL (http://host:port)");
  const char *url = argv[optind];
  char token[CLI_TOKEN_MAX + 1], via_token[CLI_TOKEN_MAX + 1];
  int rc = token_from(token_file, "STROBE_TOKEN", "--token-file", token);
  if (rc) return rc;
  if (via_url) {
    rc = token_from(via_token_file, "STROBE_VIA_TOKEN", "--via-token-file", via_token);
    if (!rc) rc = via(via_url, via_token, url, token, (unsigned)rounds, (unsigned)max_rtt_ms, peer, json);
    memset(token, 0, sizeof token);
    memset(via_token, 0, sizeof via_token);
    return rc;
  }
#ifdef STROBE_CLI_HAVE_SERVER
  strobe_clock_offset_desc d = {url, token, (uint32_t)rounds, (uint32_t)max_rtt_ms, peer};
  strobe_clock_offset o;
  rc = strobe_clock_offset_measure(&d, &o);
  memset(token, 0, sizeof token);
  if (rc) {
    cli_error(CMD, "%s: %s (%s)", url, why(rc), strobe_err_name(rc));
    return rc == STROBE_EINVAL ? CLI_USAGE : CLI_FAIL;
  }
  print_sample(json, o.peer, o.peer_boot_id, (long long)o.offset_ns, (unsigned long long)o.error_ns,
               (unsigned long long)o.rtt_ns, (unsigned long long)o.at_mono_ns, o.rounds, NULL);
  return CLI_OK;
#else
  memset(token, 0, sizeof token);
  cli_error(CMD, "this strobe was built without libstrobe_server (libmicrohttpd): it cannot measure a clock offset");
  return CLI_FAIL;
#endif
}
