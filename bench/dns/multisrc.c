// A UDP DNS load client whose every query comes from another source address (the end-to-end
// schedule benchmark: 100,000 users told apart by address). One socket bound to 0.0.0.0; each query's
// source is set with IP_PKTINFO (any 127.0.0.0/8 address is local on loopback), so replies to every
// address reach the same socket. Keeps WINDOW queries in flight, like dnsperf -q; a window that stays
// unanswered for 500 ms counts as lost.
// IPv6: FIRST_ADDRESS `v6` sends to [::1]:PORT from 2001:db8:U>>16:U&0xffff::1 for the users U < USERS
// (bench/dns/isp-host-setup.ts's second address of each subscriber); those addresses must be local:
// `ip -6 route replace local 2001:db8::/32 dev lo`.
// Relays: FIRST_ADDRESS `ecs:A.B.C.D` sends every query from 127.0.0.1 (one relay) with the user's
// address A.B.C.D + U as an EDNS Client Subnet /32, and `ecs6` with 2001:db8:U>>16:U&0xffff::1 as a /128.
// Build: gcc -O2 -o multisrc bench/dns/multisrc.c
// Run:   multisrc PORT FIRST_ADDRESS|v6|ecs:A.B.C.D|ecs6 USERS NAMES_FILE SECONDS WINDOW
//        prints "sent received seconds"
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_NAMES 4096
#define BATCH 32

static unsigned char packets[MAX_NAMES][300];
static int lengths[MAX_NAMES];
/* Relay mode: each query copied here with its OPT record and ECS option appended. */
static unsigned char relayed[BATCH][340];

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* User u's IPv6 address (bench/dns/isp-host-setup.ts's second address of each subscriber). */
static void user_v6(uint32_t u, unsigned char *a) {
  memset(a, 0, 16);
  a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
  a[4] = (unsigned char)(u >> 24), a[5] = (unsigned char)(u >> 16), a[6] = (unsigned char)(u >> 8), a[7] = (unsigned char)u;
  a[15] = 1;
}

/* Copies packet `name` into `out` with an OPT record carrying ECS `addr` (4 or 16 bytes, full prefix); its length. */
static int with_ecs(unsigned char *out, int name, const unsigned char *addr, int bytes) {
  int n = lengths[name];
  memcpy(out, packets[name], n);
  out[11] = 1; /* ARCOUNT */
  unsigned char opt[11] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0};
  int option = 4 + 4 + bytes;
  opt[9] = (unsigned char)(option >> 8), opt[10] = (unsigned char)option;
  memcpy(out + n, opt, 11);
  n += 11;
  unsigned char head[8] = {0, 8, 0, (unsigned char)(4 + bytes), 0, bytes == 4 ? 1 : 2, (unsigned char)(8 * bytes), 0};
  memcpy(out + n, head, 8);
  n += 8;
  memcpy(out + n, addr, bytes);
  return n + bytes;
}

/* An A query for `name` (dotted, no trailing dot) into packets[i]. */
static void encode(int i, const char *name) {
  unsigned char *p = packets[i];
  memset(p, 0, 12);
  p[2] = 1; /* RD */
  p[5] = 1; /* QDCOUNT */
  int n = 12;
  const char *s = name;
  while (*s) {
    const char *dot = strchr(s, '.');
    int len = dot ? (int)(dot - s) : (int)strlen(s);
    p[n++] = (unsigned char)len;
    memcpy(p + n, s, len);
    n += len;
    s += len + (dot ? 1 : 0);
  }
  p[n++] = 0;
  p[n++] = 0, p[n++] = 1, p[n++] = 0, p[n++] = 1;
  lengths[i] = n;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: multisrc PORT FIRST_ADDRESS USERS NAMES_FILE SECONDS WINDOW\n");
    return 2;
  }
  int port = atoi(argv[1]);
  int ecs4 = strncmp(argv[2], "ecs:", 4) == 0, ecs6 = strcmp(argv[2], "ecs6") == 0;
  uint32_t first = ntohl(inet_addr(ecs4 ? argv[2] + 4 : argv[2]));
  uint32_t ecs_first = first; /* the users' first address in ECS */
  long users = atol(argv[3]);
  double duration = atof(argv[5]);
  long window = atol(argv[6]);
  FILE *f = fopen(argv[4], "r");
  if (!f) return perror("names"), 1;
  char line[256];
  int names = 0;
  while (names < MAX_NAMES && fgets(line, sizeof line, f)) {
    char *sp = strpbrk(line, " \n");
    if (sp) *sp = 0;
    if (line[0]) encode(names++, line);
  }
  fclose(f);
  int v6 = strcmp(argv[2], "v6") == 0;
  if (ecs4 || ecs6) first = ntohl(inet_addr("127.0.0.1")); /* the relay */
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
  int big = 1 << 22;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  /* An IPv6 source in IPV6_PKTINFO must be an address of this host, unless the socket may use any. */
  int on = 1;
  if (v6) setsockopt(fd, SOL_IP, IP_FREEBIND, &on, sizeof on);
  struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
  struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
  if ((v6 ? bind(fd, (struct sockaddr *)&any6, sizeof any6) : bind(fd, (struct sockaddr *)&any, sizeof any)) < 0)
    return perror("bind"), 1;
  struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = inet_addr("127.0.0.1")};
  struct sockaddr_in6 server6 = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};

  struct mmsghdr out[BATCH], in[64];
  struct iovec oiov[BATCH], iiov[64];
  char control[BATCH][CMSG_SPACE(sizeof(struct in6_pktinfo))];
  static unsigned char rbuf[64][512];
  memset(out, 0, sizeof out);
  memset(in, 0, sizeof in);
  for (int i = 0; i < 64; i++) {
    iiov[i].iov_base = rbuf[i];
    iiov[i].iov_len = sizeof rbuf[i];
    in[i].msg_hdr.msg_iov = &iiov[i];
    in[i].msg_hdr.msg_iovlen = 1;
  }
  long sent = 0, received = 0, outstanding = 0;
  double start = seconds(), end = start + duration, quiet = start;
  while (seconds() < end) {
    int k = 0;
    while (k < BATCH && outstanding + k < window) {
      long q = sent + k;
      int name = (int)(q % names);
      uint32_t user = (uint32_t)((q * 31) % users);
      uint32_t src = ecs4 || ecs6 ? first : first + user;
      packets[name][0] = (unsigned char)(q >> 8), packets[name][1] = (unsigned char)q;
      oiov[k].iov_base = packets[name];
      oiov[k].iov_len = lengths[name];
      if (ecs4 || ecs6) {
        unsigned char addr[16];
        if (ecs6) user_v6(user, addr);
        else {
          uint32_t a = htonl(ecs_first + user);
          memcpy(addr, &a, 4);
        }
        oiov[k].iov_base = relayed[k];
        oiov[k].iov_len = with_ecs(relayed[k], name, addr, ecs6 ? 16 : 4);
      }
      struct msghdr *h = &out[k].msg_hdr;
      h->msg_name = v6 ? (void *)&server6 : (void *)&server;
      h->msg_namelen = v6 ? sizeof server6 : sizeof server;
      h->msg_iov = &oiov[k];
      h->msg_iovlen = 1;
      h->msg_control = control[k];
      /* The source address: IP_PKTINFO's, or IPV6_PKTINFO's for the user's IPv6 address. */
      size_t info = v6 ? sizeof(struct in6_pktinfo) : sizeof(struct in_pktinfo);
      h->msg_controllen = CMSG_SPACE(info);
      struct cmsghdr *c = CMSG_FIRSTHDR(h);
      c->cmsg_level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
      c->cmsg_type = v6 ? IPV6_PKTINFO : IP_PKTINFO;
      c->cmsg_len = CMSG_LEN(info);
      memset(CMSG_DATA(c), 0, info);
      if (v6) {
        user_v6(user, ((struct in6_pktinfo *)CMSG_DATA(c))->ipi6_addr.s6_addr);
      } else {
        ((struct in_pktinfo *)CMSG_DATA(c))->ipi_spec_dst.s_addr = htonl(src);
      }
      k++;
    }
    if (k > 0) {
      int n = sendmmsg(fd, out, k, 0);
      if (n > 0) sent += n, outstanding += n;
    }
    int r = recvmmsg(fd, in, 64, MSG_DONTWAIT, NULL);
    if (r > 0) {
      received += r;
      outstanding -= r;
      if (outstanding < 0) outstanding = 0;
      quiet = seconds();
    } else if (outstanding >= window) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      poll(&p, 1, 10);
      if (seconds() - quiet > 0.5) outstanding = 0, quiet = seconds(); /* the window was lost */
    }
  }
  double elapsed = seconds() - start;
  /* Late replies still count (drained for 200 ms). */
  double drain = seconds() + 0.2;
  while (seconds() < drain && outstanding > 0) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 20) <= 0) continue;
    int r = recvmmsg(fd, in, 64, MSG_DONTWAIT, NULL);
    if (r > 0) received += r, outstanding -= r;
  }
  printf("%ld %ld %.3f\n", sent, received, elapsed);
  return 0;
}
