/*
 * filterd's batched UDP I/O (docs/dns.md, "I/O paths"). It does only the system calls:
 * a socket (SO_REUSEPORT for listeners, or connected to one resolver), recvmmsg into a receive
 * area JS owns, sendmmsg from a send area JS owns, and a uv_poll on the fd for wake-ups. Parsing,
 * policy and answers stay in JavaScript.
 *
 * Areas (ArrayBuffers allocated by JS, referenced here for the socket's lifetime):
 *   rxBuf  batch * slot bytes     datagram i at i * slot
 *   rxInfo Int32Array(batch * 2)  [length (-1: larger than the slot, truncated), peer port]
 *   rxAddr Uint8Array(batch * 16) peer address (4 bytes for IPv4, 16 for IPv6)
 *   txBuf, txInfo, txAddr         the same for sending (address ignored on a connected socket)
 * The JS callback gets (count) for a batch of `count` datagrams, or (-errno) for a socket error
 * (ECONNREFUSED: the resolver's ICMP port unreachable on a connected socket). It runs
 * synchronously; the areas are reused by the next recvmmsg.
 *
 * One JS call per event-loop turn (once JS has called setTurn): a socket's poll callback reads one
 * batch and joins the turn's list, and a check handle, which runs after the poll phase, hands every
 * socket's batch to JS in one call as [socket id, count] pairs. A front process has its listener
 * and each resolver's pool of sockets; one call instead of one per socket saves a crossing into JS
 * per socket and lets the answers of the whole turn leave in one sendmmsg. A socket holding a batch
 * is not read again until the batch was handed over.
 */
#include <node_api.h>
#include <uv.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "steering.h"

/* Batches handled per wake-up before yielding to the event loop (the poll is level-triggered). */
#define MAX_ROUNDS 8

struct turn_state;

typedef struct {
  int fd;
  /* JS's number for this socket, named in the turn's pairs. */
  int32_t id;
  /* Datagrams read and not yet handed to JS (0: none). */
  int32_t held;
  struct turn_state *turn;
  int family;
  int connected;
  int closed;
  uint32_t batch;
  uint32_t slot;
  napi_env env;
  napi_ref callback;
  napi_ref areas[6];
  napi_async_context actx;
  uv_poll_t poll;
  int polling;
  /* errno of the last send that failed for another reason than a full queue (0: none). */
  int send_error;
  uint8_t *rx_buf;
  int32_t *rx_info;
  uint8_t *rx_addr;
  uint8_t *tx_buf;
  int32_t *tx_info;
  uint8_t *tx_addr;
  struct mmsghdr *rmsg;
  struct iovec *riov;
  struct sockaddr_storage *rname;
  struct mmsghdr *smsg;
  struct iovec *siov;
  struct sockaddr_storage *sname;
} udp_socket;

/* The batches read in this event-loop turn, for one Node-API environment (the main thread or a worker). */
typedef struct turn_state {
  uv_check_t check;
  napi_env env;
  /* JS (pairs) => void, given by setTurn (which makes this state). */
  napi_ref deliver;
  /* Keeps the pairs' Int32Array alive while `area` points into it. */
  napi_ref area_ref;
  int32_t *area;
  uint32_t area_pairs;
  napi_async_context actx;
  udp_socket **ready;
  uint32_t ready_n;
  uint32_t ready_cap;
} turn_state;

#define CHECK(call) do { if ((call) != napi_ok) { throw_last(env); return NULL; } } while (0)

static void throw_last (napi_env env) {
  const napi_extended_error_info *info = NULL;
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) return;
  napi_get_last_error_info(env, &info);
  napi_throw_error(env, "ENATIVE", info != NULL && info->error_message != NULL ? info->error_message : "node-api call failed");
}

static napi_value throw_errno (napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, text, error;
  const char *name = err == EADDRINUSE ? "EADDRINUSE" : err == EACCES ? "EACCES" : err == EADDRNOTAVAIL ? "EADDRNOTAVAIL" : "EUDP";
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code, text, &error);
  napi_value errnoValue;
  napi_create_int32(env, err, &errnoValue);
  napi_set_named_property(env, error, "errno", errnoValue);
  napi_throw(env, error);
  return NULL;
}

static int fill_sockaddr (int family, const char *host, uint32_t port, struct sockaddr_storage *ss, socklen_t *len) {
  memset(ss, 0, sizeof *ss);
  if (family == 4) {
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1) return -1;
    *len = sizeof *a;
  } else {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) return -1;
    *len = sizeof *a;
  }
  return 0;
}

static void on_closed (uv_handle_t *h) {
  udp_socket *s = (udp_socket *)h->data;
  free(s->rmsg);
  free(s->riov);
  free(s->rname);
  free(s->smsg);
  free(s->siov);
  free(s->sname);
  free(s);
}

static void release (udp_socket *s) {
  napi_env env = s->env;
  if (s->callback != NULL) { napi_delete_reference(env, s->callback); s->callback = NULL; }
  for (int i = 0; i < 6; i++) {
    if (s->areas[i] != NULL) { napi_delete_reference(env, s->areas[i]); s->areas[i] = NULL; }
  }
  if (s->actx != NULL) { napi_async_destroy(env, s->actx); s->actx = NULL; }
}

/* A callback threw: to the process's uncaughtException, as an exception in node's own callbacks goes. */
static void rethrow (napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
}

static void call_js (udp_socket *s, int32_t value) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, arg, result;
  if (napi_get_reference_value(env, s->callback, &cb) == napi_ok && cb != NULL) {
    napi_get_global(env, &recv);
    napi_create_int32(env, value, &arg);
    if (napi_make_callback(env, s->actx, recv, cb, 1, &arg, &result) != napi_ok) rethrow(env);
  }
  napi_close_handle_scope(env, scope);
}

/* Points each receive header at its slot of the receive area and its address buffer (the arrays are calloc'ed). */
static void setup_receive_headers (udp_socket *s) {
  for (uint32_t i = 0; i < s->batch; i++) {
    s->riov[i].iov_base = s->rx_buf + (size_t)i * s->slot;
    s->riov[i].iov_len = s->slot;
    s->rmsg[i].msg_hdr.msg_iov = &s->riov[i];
    s->rmsg[i].msg_hdr.msg_iovlen = 1;
    s->rmsg[i].msg_hdr.msg_name = &s->rname[i];
    s->rmsg[i].msg_hdr.msg_namelen = sizeof s->rname[i];
  }
}

/* Keeps the batch just read for the turn's single JS call; false: hand it over now (no turn set up, or no memory). */
static int hold (udp_socket *s, int32_t n) {
  turn_state *t = s->turn;
  if (t == NULL) return 0;
  if (t->ready_n == t->ready_cap) {
    uint32_t cap = t->ready_cap == 0 ? 16 : 2 * t->ready_cap;
    udp_socket **grown = realloc(t->ready, cap * sizeof *grown);
    if (grown == NULL) return 0;
    t->ready = grown;
    t->ready_cap = cap;
  }
  s->held = n;
  t->ready[t->ready_n++] = s;
  return 1;
}

/* After the poll phase: every batch this turn read, to JS in one call (more when the area is full). */
static void on_turn_end (uv_check_t *h) {
  turn_state *t = (turn_state *)h->data;
  if (t->ready_n == 0) return;
  napi_env env = t->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb = NULL, recv, arg, result;
  napi_get_reference_value(env, t->deliver, &cb);
  napi_get_global(env, &recv);
  uint32_t i = 0;
  while (i < t->ready_n) {
    uint32_t k = 0;
    /* A socket closed since its read (JS may close one in this very loop) is skipped: it stays
       allocated until the closing phase, which comes after this one. */
    for (; i < t->ready_n && k < t->area_pairs; i++) {
      udp_socket *s = t->ready[i];
      int32_t n = s->held;
      s->held = 0;
      if (s->closed || n <= 0) continue;
      t->area[2 * k] = s->id;
      t->area[2 * k + 1] = n;
      k++;
    }
    if (k == 0 || cb == NULL) continue;
    napi_create_uint32(env, k, &arg);
    if (napi_make_callback(env, t->actx, recv, cb, 1, &arg, &result) != napi_ok) rethrow(env);
  }
  t->ready_n = 0;
  napi_close_handle_scope(env, scope);
}

static void on_readable (uv_poll_t *h, int status, int events) {
  udp_socket *s = (udp_socket *)h->data;
  if (s->closed || s->held > 0) return;
  for (int round = 0; round < MAX_ROUNDS && !s->closed; round++) {
    /*
     * The headers were set up once at open (setup_receive_headers). recvmmsg only reads them, except
     * msg_namelen, which it lowers to the peer address's length: give each back the whole room.
     */
    for (uint32_t i = 0; i < s->batch; i++) s->rmsg[i].msg_hdr.msg_namelen = sizeof s->rname[i];
    int n = recvmmsg(s->fd, s->rmsg, s->batch, MSG_DONTWAIT, NULL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      /* A pending socket error (ICMP) is consumed by this call: report it and read on. */
      call_js(s, -errno);
      continue;
    }
    if (n == 0) return;
    for (int i = 0; i < n; i++) {
      struct msghdr *m = &s->rmsg[i].msg_hdr;
      s->rx_info[2 * i] = (m->msg_flags & MSG_TRUNC) ? -1 : (int32_t)s->rmsg[i].msg_len;
      struct sockaddr_storage *ss = &s->rname[i];
      if (ss->ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        memcpy(s->rx_addr + 16 * i, &a->sin_addr, 4);
        s->rx_info[2 * i + 1] = ntohs(a->sin_port);
      } else if (ss->ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        memcpy(s->rx_addr + 16 * i, &a->sin6_addr, 16);
        s->rx_info[2 * i + 1] = ntohs(a->sin6_port);
      } else {
        s->rx_info[2 * i + 1] = 0;
      }
    }
    if (hold(s, n)) return;
    call_js(s, n);
    if ((uint32_t)n < s->batch) return;
  }
}

static void on_poll (uv_poll_t *h, int status, int events) {
  udp_socket *s = (udp_socket *)h->data;
  if (s->closed) return;
  /*
   * A socket error (the ICMP port unreachable a connected socket receives) comes as POLLERR, on
   * which libuv stops the poll and reports UV_EBADF. The socket is fine: recvmmsg reads and clears
   * the error (the callback gets -errno), then the poll starts again.
   */
  on_readable(h, status, events);
  if (status < 0 && !s->closed) uv_poll_start(&s->poll, UV_READABLE, on_poll);
}

static int get_area (napi_env env, napi_value v, void **data, size_t *len) {
  bool is = false;
  napi_is_typedarray(env, v, &is);
  if (is) {
    napi_typedarray_type type;
    size_t length, offset;
    napi_value ab;
    void *p;
    if (napi_get_typedarray_info(env, v, &type, &length, &p, &ab, &offset) != napi_ok) return -1;
    size_t size = type == napi_int32_array || type == napi_uint32_array ? 4 : type == napi_uint16_array || type == napi_int16_array ? 2 : 1;
    *data = p;
    *len = length * size;
    return 0;
  }
  return -1;
}

static void free_turn (uv_handle_t *h) {
  turn_state *t = (turn_state *)h->data;
  free(t->ready);
  free(t);
}

/* The environment is going away (process exit, a worker's end): its loop closes the check handle. */
static void cleanup_turn (void *data) {
  turn_state *t = (turn_state *)data;
  uv_check_stop(&t->check);
  uv_close((uv_handle_t *)&t->check, free_turn);
}

/*
 * setTurn(deliver, area): from now on this environment's sockets hand their batches over once per
 * event-loop turn, as deliver(pairs) with [socket id, count] pairs in area (an Int32Array).
 */
static napi_value SetTurn (napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t0;
  CHECK(napi_typeof(env, argv[0], &t0));
  void *area = NULL;
  size_t areaLen = 0;
  if (argc < 2 || t0 != napi_function || get_area(env, argv[1], &area, &areaLen) != 0 || areaLen < 8) {
    napi_throw_type_error(env, "EINVAL", "udp.setTurn: a function and an Int32Array of at least one pair");
    return NULL;
  }
  void *existing = NULL;
  if (napi_get_instance_data(env, &existing) == napi_ok && existing != NULL) {
    napi_throw_error(env, "EINVAL", "udp.setTurn: already set in this environment");
    return NULL;
  }
  uv_loop_t *loop = NULL;
  CHECK(napi_get_uv_event_loop(env, &loop));
  turn_state *t = calloc(1, sizeof *t);
  if (t == NULL || uv_check_init(loop, &t->check) != 0) {
    free(t);
    return throw_errno(env, "uv_check_init", ENOMEM);
  }
  t->env = env;
  t->check.data = t;
  t->area = (int32_t *)area;
  t->area_pairs = (uint32_t)(areaLen / 8);
  napi_create_reference(env, argv[0], 1, &t->deliver);
  napi_create_reference(env, argv[1], 1, &t->area_ref);
  napi_value resName, resource;
  napi_create_string_utf8(env, "filterd.udp.turn", NAPI_AUTO_LENGTH, &resName);
  napi_create_object(env, &resource);
  napi_async_init(env, resource, resName, &t->actx);
  uv_check_start(&t->check, on_turn_end);
  /* The sockets' polls keep the loop alive; this handle only runs after them. */
  uv_unref((uv_handle_t *)&t->check);
  napi_set_instance_data(env, t, NULL, NULL);
  napi_add_env_cleanup_hook(env, cleanup_turn, t);
  return NULL;
}

/*
 * open(options) -> { handle, port, receiveBufferSize }. options: { family: 4|6, host, port, reusePort,
 * steerSockets (0: the kernel's choice; N >= 2: by client address over N sockets, steering.c),
 * steerClientSubnet (steer by the EDNS Client Subnet address when the query has one), receiveBuffer (0: kernel default), connectHost?, connectPort?,
 * batch, slot, rxBuf, rxInfo, rxAddr, txBuf, txInfo, txAddr, onBatch, id (named in the turn's pairs) }
 */
static napi_value Open (napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_value o = argv[0];
  napi_value v;
  int32_t family = 4, port = 0, connectPort = 0, batch = 0, slot = 0;
  bool reusePort = false, steerClientSubnet = false;
  char host[64] = "", connectHost[64] = "";
  size_t hl = 0;
  CHECK(napi_get_named_property(env, o, "family", &v)); CHECK(napi_get_value_int32(env, v, &family));
  CHECK(napi_get_named_property(env, o, "host", &v)); CHECK(napi_get_value_string_utf8(env, v, host, sizeof host, &hl));
  CHECK(napi_get_named_property(env, o, "port", &v)); CHECK(napi_get_value_int32(env, v, &port));
  CHECK(napi_get_named_property(env, o, "reusePort", &v)); CHECK(napi_get_value_bool(env, v, &reusePort));
  CHECK(napi_get_named_property(env, o, "batch", &v)); CHECK(napi_get_value_int32(env, v, &batch));
  CHECK(napi_get_named_property(env, o, "slot", &v)); CHECK(napi_get_value_int32(env, v, &slot));
  int32_t receiveBuffer = 0, steerSockets = 0, id = 0;
  CHECK(napi_get_named_property(env, o, "id", &v)); CHECK(napi_get_value_int32(env, v, &id));
  CHECK(napi_get_named_property(env, o, "steerSockets", &v)); CHECK(napi_get_value_int32(env, v, &steerSockets));
  CHECK(napi_get_named_property(env, o, "steerClientSubnet", &v)); CHECK(napi_get_value_bool(env, v, &steerClientSubnet));
  CHECK(napi_get_named_property(env, o, "receiveBuffer", &v)); CHECK(napi_get_value_int32(env, v, &receiveBuffer));
  bool hasConnect = false;
  CHECK(napi_has_named_property(env, o, "connectHost", &hasConnect));
  if (hasConnect) {
    napi_valuetype t;
    CHECK(napi_get_named_property(env, o, "connectHost", &v));
    CHECK(napi_typeof(env, v, &t));
    if (t == napi_string) {
      CHECK(napi_get_value_string_utf8(env, v, connectHost, sizeof connectHost, &hl));
      CHECK(napi_get_named_property(env, o, "connectPort", &v)); CHECK(napi_get_value_int32(env, v, &connectPort));
    } else {
      hasConnect = false;
    }
  }
  if (receiveBuffer < 0 || steerSockets < 0 || steerSockets > 1024 || (steerSockets > 0 && !reusePort)) {
    napi_throw_range_error(env, "EINVAL", "udp.open: bad receiveBuffer or steerSockets");
    return NULL;
  }
  if ((family != 4 && family != 6) || batch < 1 || batch > 1024 || slot < 512 || slot > 65536 || port < 0 || port > 65535) {
    napi_throw_range_error(env, "EINVAL", "udp.open: bad family, batch, slot or port");
    return NULL;
  }
  static const char *names[6] = { "rxBuf", "rxInfo", "rxAddr", "txBuf", "txInfo", "txAddr" };
  const size_t need[6] = {
    (size_t)batch * slot, (size_t)batch * 8, (size_t)batch * 16, (size_t)batch * slot, (size_t)batch * 8, (size_t)batch * 16
  };
  void *ptr[6];
  napi_value areaValues[6];
  for (int i = 0; i < 6; i++) {
    size_t len = 0;
    CHECK(napi_get_named_property(env, o, names[i], &areaValues[i]));
    if (get_area(env, areaValues[i], &ptr[i], &len) != 0 || len < need[i]) {
      napi_throw_range_error(env, "EINVAL", "udp.open: an I/O area is missing or too small");
      return NULL;
    }
  }
  napi_value cb;
  napi_valuetype cbt;
  CHECK(napi_get_named_property(env, o, "onBatch", &cb));
  CHECK(napi_typeof(env, cb, &cbt));
  if (cbt != napi_function) { napi_throw_type_error(env, "EINVAL", "udp.open: onBatch must be a function"); return NULL; }

  struct sockaddr_storage local, remote;
  socklen_t localLen = 0, remoteLen = 0;
  if (fill_sockaddr(family, host, (uint32_t)port, &local, &localLen) != 0) {
    napi_throw_error(env, "EINVAL", "udp.open: bad host address");
    return NULL;
  }
  if (hasConnect && fill_sockaddr(family, connectHost, (uint32_t)connectPort, &remote, &remoteLen) != 0) {
    napi_throw_error(env, "EINVAL", "udp.open: bad connect address");
    return NULL;
  }
  int fd = socket(family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int one = 1;
  if (family == 6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (reusePort && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    int e = errno; close(fd); return throw_errno(env, "setsockopt(SO_REUSEPORT)", e);
  }
  /* Bursts of a loaded server: a larger receive queue before the kernel drops (capped by rmem_max;
     0 keeps the kernel default). The size the kernel granted is read back below. */
  if (receiveBuffer > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer);
  int granted = 0;
  socklen_t grantedLen = sizeof granted;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedLen);
  if (bind(fd, (struct sockaddr *)&local, localLen) != 0) { int e = errno; close(fd); return throw_errno(env, "bind", e); }
  /* Every socket of the group attaches the same program: the last one attached serves the group. */
  if (steerSockets >= 2) {
    int r = attach_address_steering(fd, family, (uint32_t)steerSockets, steerClientSubnet);
    if (r != 0) {
      int e = r == -2 ? EINVAL : errno; close(fd); return throw_errno(env, "setsockopt(SO_ATTACH_REUSEPORT_CBPF)", e);
    }
  }
  if (hasConnect && connect(fd, (struct sockaddr *)&remote, remoteLen) != 0) { int e = errno; close(fd); return throw_errno(env, "connect", e); }
  struct sockaddr_storage bound;
  socklen_t boundLen = sizeof bound;
  getsockname(fd, (struct sockaddr *)&bound, &boundLen);
  int boundPort = bound.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port) : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);

  udp_socket *s = calloc(1, sizeof *s);
  if (s == NULL) { close(fd); return throw_errno(env, "calloc", ENOMEM); }
  s->fd = fd;
  s->id = id;
  void *turn = NULL;
  if (napi_get_instance_data(env, &turn) == napi_ok) s->turn = (turn_state *)turn;
  s->family = family;
  s->connected = hasConnect;
  s->batch = (uint32_t)batch;
  s->slot = (uint32_t)slot;
  s->env = env;
  s->rx_buf = ptr[0]; s->rx_info = ptr[1]; s->rx_addr = ptr[2];
  s->tx_buf = ptr[3]; s->tx_info = ptr[4]; s->tx_addr = ptr[5];
  s->rmsg = calloc(batch, sizeof *s->rmsg);
  s->riov = calloc(batch, sizeof *s->riov);
  s->rname = calloc(batch, sizeof *s->rname);
  s->smsg = calloc(batch, sizeof *s->smsg);
  s->siov = calloc(batch, sizeof *s->siov);
  s->sname = calloc(batch, sizeof *s->sname);
  for (int i = 0; i < 6; i++) napi_create_reference(env, areaValues[i], 1, &s->areas[i]);
  napi_create_reference(env, cb, 1, &s->callback);
  napi_value resName;
  napi_create_string_utf8(env, "filterd.udp", NAPI_AUTO_LENGTH, &resName);
  napi_value resource;
  napi_create_object(env, &resource);
  napi_async_init(env, resource, resName, &s->actx);
  uv_loop_t *loop = NULL;
  napi_get_uv_event_loop(env, &loop);
  if (s->rmsg == NULL || s->riov == NULL || s->rname == NULL || s->smsg == NULL || s->siov == NULL || s->sname == NULL ||
      loop == NULL || uv_poll_init(loop, &s->poll, fd) != 0) {
    release(s);
    close(fd);
    s->poll.data = s;
    on_closed((uv_handle_t *)&s->poll);
    return throw_errno(env, "uv_poll_init", ENOMEM);
  }
  setup_receive_headers(s);
  s->poll.data = s;
  uv_poll_start(&s->poll, UV_READABLE, on_poll);
  s->polling = 1;

  napi_value handle, result, portValue, grantedValue;
  CHECK(napi_create_external(env, s, NULL, NULL, &handle));
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_int32(env, boundPort, &portValue));
  CHECK(napi_create_int32(env, granted, &grantedValue));
  napi_set_named_property(env, result, "handle", handle);
  napi_set_named_property(env, result, "port", portValue);
  napi_set_named_property(env, result, "receiveBufferSize", grantedValue);
  return result;
}

static udp_socket *unwrap (napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok) { napi_throw_type_error(env, "EINVAL", "not a udp handle"); return NULL; }
  return (udp_socket *)p;
}

/* send(handle, count) -> datagrams handed to the kernel (the rest: the send queue is full). */
static napi_value Send (napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  int32_t count = 0;
  CHECK(napi_get_value_int32(env, argv[1], &count));
  int sent = 0;
  if (!s->closed && count > 0) {
    if ((uint32_t)count > s->batch) count = (int32_t)s->batch;
    int m = 0;
    for (int i = 0; i < count; i++) {
      int32_t len = s->tx_info[2 * i];
      if (len < 0 || (uint32_t)len > s->slot) continue;
      s->siov[m].iov_base = s->tx_buf + (size_t)i * s->slot;
      s->siov[m].iov_len = (size_t)len;
      memset(&s->smsg[m].msg_hdr, 0, sizeof s->smsg[m].msg_hdr);
      s->smsg[m].msg_hdr.msg_iov = &s->siov[m];
      s->smsg[m].msg_hdr.msg_iovlen = 1;
      if (!s->connected) {
        struct sockaddr_storage *ss = &s->sname[m];
        memset(ss, 0, sizeof *ss);
        uint16_t port = htons((uint16_t)s->tx_info[2 * i + 1]);
        if (s->family == 4) {
          struct sockaddr_in *a = (struct sockaddr_in *)ss;
          a->sin_family = AF_INET;
          a->sin_port = port;
          memcpy(&a->sin_addr, s->tx_addr + 16 * i, 4);
          s->smsg[m].msg_hdr.msg_namelen = sizeof *a;
        } else {
          struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
          a->sin6_family = AF_INET6;
          a->sin6_port = port;
          memcpy(&a->sin6_addr, s->tx_addr + 16 * i, 16);
          s->smsg[m].msg_hdr.msg_namelen = sizeof *a;
        }
        s->smsg[m].msg_hdr.msg_name = ss;
      }
      m++;
    }
    int off = 0;
    while (off < m) {
      int n = sendmmsg(s->fd, s->smsg + off, (unsigned)(m - off), MSG_DONTWAIT);
      if (n > 0) { off += n; sent += n; continue; }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) break;
      /* This datagram cannot go (unreachable peer, refused on a connected socket): skip it. */
      if (n < 0) s->send_error = errno;
      off++;
    }
  }
  CHECK(napi_create_int32(env, sent, &result));
  return result;
}

/* sendOne(handle, buffer, length, addrBytes|null, port) -> 1 sent, 0 not: for datagrams larger than a slot. */
static napi_value SendOne (napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  void *data = NULL, *addr = NULL;
  size_t len = 0, alen = 0;
  int32_t length = 0, port = 0;
  if (get_area(env, argv[1], &data, &len) != 0) { napi_throw_type_error(env, "EINVAL", "sendOne: buffer expected"); return NULL; }
  CHECK(napi_get_value_int32(env, argv[2], &length));
  CHECK(napi_get_value_int32(env, argv[4], &port));
  if (length < 0 || (size_t)length > len) { napi_throw_range_error(env, "EINVAL", "sendOne: bad length"); return NULL; }
  int ok = 0;
  if (!s->closed) {
    ssize_t n;
    if (s->connected) {
      n = send(s->fd, data, (size_t)length, MSG_DONTWAIT);
    } else {
      if (get_area(env, argv[3], &addr, &alen) != 0 || alen < (s->family == 4 ? 4u : 16u)) {
        napi_throw_type_error(env, "EINVAL", "sendOne: address bytes expected"); return NULL;
      }
      struct sockaddr_storage ss;
      socklen_t sl;
      memset(&ss, 0, sizeof ss);
      if (s->family == 4) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET; a->sin_port = htons((uint16_t)port); memcpy(&a->sin_addr, addr, 4); sl = sizeof *a;
      } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6; a->sin6_port = htons((uint16_t)port); memcpy(&a->sin6_addr, addr, 16); sl = sizeof *a;
      }
      n = sendto(s->fd, data, (size_t)length, MSG_DONTWAIT, (struct sockaddr *)&ss, sl);
    }
    ok = n >= 0 ? 1 : 0;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) s->send_error = errno;
  }
  CHECK(napi_create_int32(env, ok, &result));
  return result;
}

/* takeSendError(handle) -> errno of the last failed send since the previous call, or 0. */
static napi_value TakeSendError (napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_socket *s = unwrap(env, argv[0]);
  if (s == NULL) return NULL;
  int e = s->send_error;
  s->send_error = 0;
  CHECK(napi_create_int32(env, e, &result));
  return result;
}

/* close(handle): stops the poll, closes the fd; no callback runs after this returns. */
static napi_value Close (napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_socket *s = unwrap(env, argv[0]);
  if (s == NULL || s->closed) return NULL;
  s->closed = 1;
  uv_poll_stop(&s->poll);
  close(s->fd);
  s->fd = -1;
  release(s);
  uv_close((uv_handle_t *)&s->poll, on_closed);
  return NULL;
}

static napi_value Init (napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    { "open", NULL, Open, NULL, NULL, NULL, napi_default, NULL },
    { "send", NULL, Send, NULL, NULL, NULL, napi_default, NULL },
    { "sendOne", NULL, SendOne, NULL, NULL, NULL, napi_default, NULL },
    { "takeSendError", NULL, TakeSendError, NULL, NULL, NULL, napi_default, NULL },
    { "close", NULL, Close, NULL, NULL, NULL, napi_default, NULL },
    { "setTurn", NULL, SetTurn, NULL, NULL, NULL, napi_default, NULL }
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
