/*
 * fuzz_jsonrpc.c — libFuzzer target for the MCP JSON-RPC handler
 * (src/server/mcp.c, strobe__mcp_handle), driven without HTTP exactly as
 * POST /mcp drives it. Input: one selector byte (which Mcp-Session-Id and
 * MCP-Protocol-Version headers accompany the body), then the body.
 *
 * Beyond ASan/UBSan, every reply is checked against the rules the official
 * SDK client holds servers to: a status from the fixed set; 202 and 204
 * without a body, every other status with a JSON object body carrying
 * "jsonrpc":"2.0", exactly one of result/error, an id that is a string or an
 * integer (never null), and no other top-level key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_internal.h"

static strobe_collector *g_c;
static strobe__perms g_perms;
static strobe__mcp *g_mcp;
static char g_sid[STROBE__MCP_SID_LEN + 1];
static unsigned g_runs;

static void setup(void) {
  if (strobe_collector_create(&g_c)) abort();
  strobe_window w;
  strobe_window_register(g_c, "main", 0, &w);
  strobe__mutex_init(&g_perms.lock);
  g_perms.mcp_enabled = g_perms.observe = 1;
  g_perms.tools = STROBE_TOOL_ALL;
  strobe__mcp_config cfg = {g_c, &g_perms, 4, 600, NULL};
  if (strobe__mcp_create(&cfg, &g_mcp)) abort();
  strobe__mcp_request req = {NULL, NULL, 1000, NULL};
  strobe__mcp_response resp;
  static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}";
  strobe__mcp_handle(g_mcp, &req, init, sizeof init - 1, &resp);
  if (resp.http_status != 200 || !resp.session_id[0]) abort();
  memcpy(g_sid, resp.session_id, sizeof g_sid);
  strobe__mcp_response_free(&resp);
}

static void check_reply(const strobe__mcp_response *r) {
  switch (r->http_status) {
    case 202:
    case 204:
      if (r->body) abort();
      return;
    case 200:
    case 400:
    case 404:
    case 503: break;
    default: abort();
  }
  if (!r->body) abort();
  json_t *v = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, NULL);
  if (!json_is_object(v)) abort();
  if (!json_is_string(json_object_get(v, "jsonrpc")) || strcmp(json_string_value(json_object_get(v, "jsonrpc")), "2.0"))
    abort();
  json_t *id = json_object_get(v, "id");
  if (id && !json_is_string(id) && !json_is_integer(id)) abort();
  int has_result = json_object_get(v, "result") != NULL, has_error = json_object_get(v, "error") != NULL;
  if (has_result == has_error) abort();
  if (json_object_size(v) != 1u + (id != NULL) + 1u) abort();
  if (has_error && !json_is_integer(json_object_get(json_object_get(v, "error"), "code"))) abort();
  if (r->http_status != 200 && !has_error) abort();
  json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_mcp) setup();
  uint8_t sel = size ? data[0] : 0;
  strobe__mcp_request req = {NULL, NULL, 1000, NULL};
  if (sel & 1)
    req.session_id = g_sid;
  else if (sel & 2)
    req.session_id = "not-a-session";
  if (sel & 4)
    req.protocol_version = "2025-11-25";
  else if (sel & 8)
    req.protocol_version = "1999-99-99";
  strobe__mcp_response resp;
  strobe__mcp_handle(g_mcp, &req, size ? (const char *)data + 1 : "", size ? size - 1 : 0, &resp);
  check_reply(&resp);
  strobe__mcp_response_free(&resp);
  /* Sessions the inputs start persist so later inputs can read/end them;
   * clear them now and then so the 8-session limit does not end exploration
   * (under perms.lock, as strobe__mcp_cancel_all requires). */
  if (++g_runs % 256 == 0) {
    strobe__mutex_lock(&g_perms.lock);
    strobe__mcp_cancel_all(g_mcp);
    strobe__mutex_unlock(&g_perms.lock);
  }
  return 0;
}
