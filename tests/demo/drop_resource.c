/*
 * drop_resource.c — `drop_resource IN OUT ID`: writes capture IN to OUT
 * without the ATTACH blocks of resource ID (hex), for the demo's replay test
 * (run_demo_replay.sh): the capture a renderer would leave if it had never
 * captured that resource. Prints how many blocks it left out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/capture_edit.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: drop_resource IN OUT ID\n");
    return 2;
  }
  char *end;
  uint64_t id = strtoull(argv[3], &end, 16);
  if (*end || id == 0) {
    fprintf(stderr, "drop_resource: %s is not a resource id\n", argv[3]);
    return 2;
  }
  int n = ce_drop_resource(argv[1], argv[2], id);
  if (n < 0) {
    fprintf(stderr, "drop_resource: cannot rewrite %s\n", argv[1]);
    return 1;
  }
  printf("%d\n", n);
  return 0;
}
