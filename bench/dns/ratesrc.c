// A fixed-rate UDP DNS load generator that measures each query's latency with little overhead of its
// own (the DNS p99 beside the import). dnsperf -v prints a line per query that a second process
// must parse, and runs a sender and a receiver thread per -T thread: on a 2-core machine those compete
// with the server under test. This is one thread on one socket: queries leave one at a time at their
// scheduled instant (open loop: a slow answer never delays the next query), answers are stamped by the
// kernel when they reach the socket (SO_TIMESTAMPNS), so the generator's own wake-up delay is not
// counted as the server's latency, and every latency is kept in memory and sorted at the end.
// Build: gcc -O2 -o ratesrc bench/dns/ratesrc.c
// Run:   ratesrc PORT NAMES_FILE RATE SECONDS
//        NAMES_FILE: dnsperf's input ("name TYPE" a line; only A queries are sent)
//        prints one JSON line as bench/dns/stats.ts does: qps, lost, p50, p99, p999 (ms), samples, and
//        the same percentiles measured when the generator read the answer (app_p99, app_p999)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_NAMES 200000
#define RECV_BATCH 64
#define LOST_AFTER_NS 2000000000LL /* an answer later than 2 s counts as lost, as it would for a client */

static unsigned char *packets; /* MAX_NAMES packets of up to 300 bytes */
static int lengths[MAX_NAMES];
static int64_t sent_at[65536];   /* send time (ns) of the query with this id, 0 when none is waiting */
static double *kernel_ms, *app_ms; /* latencies of the answers */
static long answers, lost;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t); /* the clock SO_TIMESTAMPNS stamps with */
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* An A query for `name` (dotted, no trailing dot) into packet i. */
static void encode(int i, const char *name) {
  unsigned char *p = packets + (size_t)i * 300;
  memset(p, 0, 12);
  p[2] = 1; /* RD */
  p[5] = 1; /* QDCOUNT */
  int n = 12;
  const char *s = name;
  while (*s && n < 280) {
    const char *dot = strchr(s, '.');
    int len = dot ? (int)(dot - s) : (int)strlen(s);
    if (len > 63) len = 63;
    p[n++] = (unsigned char)len;
    memcpy(p + n, s, len);
    n += len;
    s += (dot ? (int)(dot - s) + 1 : (int)strlen(s));
  }
  p[n++] = 0;
  p[n++] = 0, p[n++] = 1, p[n++] = 0, p[n++] = 1;
  lengths[i] = n;
}

static int load_names(const char *file) {
  FILE *f = fopen(file, "r");
  if (!f) return perror("names"), -1;
  char line[512];
  int names = 0;
  while (names < MAX_NAMES && fgets(line, sizeof line, f)) {
    char *sp = strpbrk(line, " \t\n");
    if (sp) *sp = 0;
    if (line[0]) encode(names++, line);
  }
  fclose(f);
  return names;
}

/* Reads every answer waiting on the socket; each is matched to its query by id. */
static void drain(int fd) {
  static unsigned char bufs[RECV_BATCH][512];
  static char ctl[RECV_BATCH][64];
  struct mmsghdr in[RECV_BATCH];
  struct iovec iov[RECV_BATCH];
  for (;;) {
    for (int i = 0; i < RECV_BATCH; i++) {
      iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};
      in[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1, .msg_control = ctl[i], .msg_controllen = sizeof ctl[i]};
    }
    int n = recvmmsg(fd, in, RECV_BATCH, MSG_DONTWAIT, NULL);
    if (n <= 0) return;
    int64_t read_at = now_ns();
    for (int i = 0; i < n; i++) {
      if (in[i].msg_len < 12) continue;
      int id = bufs[i][0] << 8 | bufs[i][1];
      if (sent_at[id] == 0) continue; /* late answer to a query already counted as lost */
      int64_t stamped = read_at;
      for (struct cmsghdr *c = CMSG_FIRSTHDR(&in[i].msg_hdr); c; c = CMSG_NXTHDR(&in[i].msg_hdr, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          struct timespec t;
          memcpy(&t, CMSG_DATA(c), sizeof t);
          stamped = (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
        }
      }
      kernel_ms[answers] = (stamped - sent_at[id]) / 1e6;
      app_ms[answers] = (read_at - sent_at[id]) / 1e6;
      answers++;
      sent_at[id] = 0;
    }
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, long n, double p) {
  if (n == 0) return -1;
  long i = (long)(p * n);
  return v[i < n ? i : n - 1];
}

int main(int argc, char **argv) {
  if (argc != 5) return fprintf(stderr, "usage: ratesrc PORT NAMES_FILE RATE SECONDS\n"), 2;
  int port = atoi(argv[1]);
  double rate = atof(argv[3]), duration = atof(argv[4]);
  packets = malloc((size_t)MAX_NAMES * 300);
  int names = load_names(argv[2]);
  if (names <= 0) return fprintf(stderr, "no names in %s\n", argv[2]), 1;
  long total = (long)(rate * duration);
  kernel_ms = malloc(sizeof(double) * (total + 1));
  app_ms = malloc(sizeof(double) * (total + 1));
  prctl(PR_SET_TIMERSLACK, 1UL); /* wake at the scheduled send time, not up to 50 us later */

  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  int big = 1 << 22, on = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = inet_addr("127.0.0.1")};
  if (connect(fd, (struct sockaddr *)&server, sizeof server) < 0) return perror("connect"), 1;

  int64_t start = now_ns(), interval = (int64_t)(1e9 / rate);
  long sent = 0;
  uint16_t id = (uint16_t)(start & 0xffff);
  while (sent < total) {
    int64_t t = now_ns();
    int64_t due = start + sent * interval;
    if (t >= due) {
      if (sent_at[id] != 0) lost++; /* its id comes round again unanswered */
      unsigned char *p = packets + (size_t)(sent % names) * 300;
      p[0] = id >> 8, p[1] = id & 0xff;
      sent_at[id] = now_ns();
      if (send(fd, p, lengths[sent % names], 0) < 0 && errno != EAGAIN) return perror("send"), 1;
      sent++;
      id++;
      if (sent % 16 == 0) drain(fd); /* behind schedule: still read the answers */
      continue;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    struct timespec wait = {0, due - t};
    if (ppoll(&pfd, 1, &wait, NULL) > 0) drain(fd);
  }
  int64_t end = now_ns();
  while (now_ns() - end < LOST_AFTER_NS / 2) { /* the last answers */
    struct pollfd pfd = {fd, POLLIN, 0};
    struct timespec wait = {0, 10000000};
    if (ppoll(&pfd, 1, &wait, NULL) > 0) drain(fd);
  }
  for (int i = 0; i < 65536; i++) lost += sent_at[i] != 0;
  qsort(kernel_ms, answers, sizeof(double), cmp);
  qsort(app_ms, answers, sizeof(double), cmp);
  printf("{\"qps\":%ld,\"lost\":%ld,\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"samples\":%ld,\"app_p99\":%.3f,\"app_p999\":%.3f}\n",
         (long)(answers / ((end - start) / 1e9)), lost, pct(kernel_ms, answers, 0.5), pct(kernel_ms, answers, 0.99),
         pct(kernel_ms, answers, 0.999), answers, pct(app_ms, answers, 0.99), pct(app_ms, answers, 0.999));
  return 0;
}
