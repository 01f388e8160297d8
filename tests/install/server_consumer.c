/*
 * server_consumer.c — a program outside the Strobe tree that embeds the
 * server as an application would, using only what an installed Strobe
 * provides: built by tests/install/run.sh through `pkg-config strobe_server`
 * and through find_package (strobe::strobe_server). It starts the server on
 * a free loopback port with its own token, starts a profiling session on the
 * server's collector, and stops both.
 */
#include <stdio.h>
#include <string.h>

#include <strobe/server.h>
#include <strobe/session.h>

int main(void) {
  strobe_collector *c = NULL;
  if (strobe_collector_create(&c) != 0) return 1;
  strobe_server *srv = NULL;
  strobe_server_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.token = "install-consumer-token-0123456789";
  desc.collector = c;
  int rc = strobe_server_start(&desc, &srv);
  if (rc != 0) {
    fprintf(stderr, "strobe_server_start: %s\n", strobe_strerror(rc));
    return 1;
  }
  char id[STROBE_SESSION_ID_MAX];
  rc = strobe_session_start(c, NULL, id);
  printf("strobe_server %s on port %u, session %s\n", strobe_version(), strobe_server_query_port(srv), rc ? "-" : id);
  int ok = strobe_server_query_port(srv) > 0 && rc == 0;
  strobe_server_stop(srv);
  strobe_collector_close(c);
  strobe_collector_release(c);
  return ok ? 0 : 1;
}
