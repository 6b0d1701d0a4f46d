/*
 * Steering by client address (docs/dns.md, `proxy.udp-steering: address`): a classic BPF program for
 * a SO_REUSEPORT group that picks socket hash(address) % sockets, so every datagram of one client
 * reaches the same front process whatever its source port, and each process caches only its share of
 * the clients.
 *
 * The address is the one the policy reads. By default the source: the IPv4 source, or the first 64
 * bits of the IPv6 source (a subscriber's /64, so the temporary addresses of one household stay
 * together), read from the network header (SKF_NET_OFF: the program runs with the data at the UDP
 * payload). With `client_subnet` the query's EDNS Client Subnet address comes first when the query
 * carries one the policy can name a subscriber by: a /32 IPv4 address, or at least the /64 of an
 * IPv6 one, in the first or second EDNS option of a one-question query whose only additional record
 * is the OPT record. Anything else (no ECS, a shorter prefix, a name of more than MAX_LABELS
 * labels, a malformed message) is steered by its source. Every load is checked against the
 * datagram's length first: a classic BPF load past the end ends the program with 0, which would
 * send every such datagram to the first socket.
 *
 * An index past the sockets the group holds (a process restarting) falls back to the kernel's own
 * choice by address and port.
 */
#include <linux/filter.h>
#include <stdint.h>
#include <sys/socket.h>
#include "steering.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/* Labels of the question name walked before giving up on the ECS option. */
#define MAX_LABELS 16
#define MAX_INSNS 256

/* Jump targets, resolved after the program is laid out. */
enum { NEXT = -1, L_SOURCE = 0, L_HASH, L_NAME_END, L_ECS, L_ECS6, L_COUNT };

typedef struct {
  struct sock_filter insn[MAX_INSNS];
  int jt[MAX_INSNS], jf[MAX_INSNS], ja[MAX_INSNS];
  int at[L_COUNT];
  int n;
  int overflow;
} program;

static void emit(program *p, uint16_t code, uint32_t k, int jt, int jf) {
  if (p->n == MAX_INSNS) { p->overflow = 1; return; }
  p->insn[p->n] = (struct sock_filter)BPF_JUMP(code, k, 0, 0);
  p->jt[p->n] = jt;
  p->jf[p->n] = jf;
  p->ja[p->n] = NEXT;
  p->n++;
}

static void stmt(program *p, uint16_t code, uint32_t k) { emit(p, code, k, NEXT, NEXT); }
static void jump_always(program *p, int label) { emit(p, BPF_JMP | BPF_JA, 0, NEXT, NEXT); p->ja[p->n - 1] = label; }
static void here(program *p, int label) { p->at[label] = p->n; }

/* Continues only when the datagram holds `bytes` bytes from offset X; X is kept (in M[2]). */
static void need(program *p, uint32_t bytes) {
  stmt(p, BPF_MISC | BPF_TXA, 0);
  stmt(p, BPF_ALU | BPF_ADD | BPF_K, bytes);
  stmt(p, BPF_ST, 1);
  stmt(p, BPF_STX, 2);
  stmt(p, BPF_LDX | BPF_MEM, 1);
  stmt(p, BPF_LD | BPF_MEM, 0);
  emit(p, BPF_JMP | BPF_JGE | BPF_X, 0, NEXT, L_SOURCE);
  stmt(p, BPF_LDX | BPF_MEM, 2);
}

/* The ECS address, or a jump to the source: A holds the value to hash at L_HASH. */
static void client_subnet(program *p) {
  stmt(p, BPF_LD | BPF_W | BPF_LEN, 0);
  stmt(p, BPF_ST, 0);
  emit(p, BPF_JMP | BPF_JGE | BPF_K, 17, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_ABS, 4);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_ABS, 6);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_ABS, 8);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_ABS, 10);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, NEXT, L_SOURCE);
  /* The question name from offset 12: X moves past each label. */
  stmt(p, BPF_LDX | BPF_IMM, 12);
  for (int i = 0; i < MAX_LABELS; i++) {
    stmt(p, BPF_LD | BPF_MEM, 0);
    emit(p, BPF_JMP | BPF_JGT | BPF_X, 0, NEXT, L_SOURCE);
    stmt(p, BPF_LD | BPF_B | BPF_IND, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, L_NAME_END, NEXT);
    emit(p, BPF_JMP | BPF_JGE | BPF_K, 64, L_SOURCE, NEXT);
    stmt(p, BPF_ALU | BPF_ADD | BPF_K, 1);
    stmt(p, BPF_ALU | BPF_ADD | BPF_X, 0);
    stmt(p, BPF_MISC | BPF_TAX, 0);
  }
  jump_always(p, L_SOURCE);
  /* X at the name's last byte: type and class, then the OPT record (root name, type 41, class,
     TTL, RDLENGTH) and its first option 16 bytes on. */
  here(p, L_NAME_END);
  need(p, 20);
  stmt(p, BPF_LD | BPF_B | BPF_IND, 5);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_IND, 6);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 41, NEXT, L_SOURCE);
  stmt(p, BPF_MISC | BPF_TXA, 0);
  stmt(p, BPF_ALU | BPF_ADD | BPF_K, 16);
  stmt(p, BPF_MISC | BPF_TAX, 0);
  /* X at an option: ECS (code 8) is taken; another is stepped over, once. */
  for (int i = 0; i < 2; i++) {
    need(p, 4);
    stmt(p, BPF_LD | BPF_H | BPF_IND, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 8, L_ECS, NEXT);
    stmt(p, BPF_LD | BPF_H | BPF_IND, 2);
    stmt(p, BPF_ALU | BPF_ADD | BPF_K, 4);
    stmt(p, BPF_ALU | BPF_ADD | BPF_X, 0);
    stmt(p, BPF_MISC | BPF_TAX, 0);
  }
  jump_always(p, L_SOURCE);
  /* ECS: OPTION-LENGTH at X+2, FAMILY at X+4, the address from X+8. */
  here(p, L_ECS);
  need(p, 8);
  stmt(p, BPF_LD | BPF_H | BPF_IND, 4);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 2, L_ECS6, NEXT);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, NEXT, L_SOURCE);
  stmt(p, BPF_LD | BPF_H | BPF_IND, 2);
  emit(p, BPF_JMP | BPF_JEQ | BPF_K, 8, NEXT, L_SOURCE);
  need(p, 12);
  stmt(p, BPF_LD | BPF_W | BPF_IND, 8);
  jump_always(p, L_HASH);
  here(p, L_ECS6);
  stmt(p, BPF_LD | BPF_H | BPF_IND, 2);
  emit(p, BPF_JMP | BPF_JGE | BPF_K, 12, NEXT, L_SOURCE);
  need(p, 16);
  stmt(p, BPF_LD | BPF_W | BPF_IND, 8);
  stmt(p, BPF_ALU | BPF_MUL | BPF_K, 0x85EBCA6Bu);
  stmt(p, BPF_ST, 3);
  stmt(p, BPF_LD | BPF_W | BPF_IND, 12);
  stmt(p, BPF_LDX | BPF_MEM, 3);
  stmt(p, BPF_ALU | BPF_XOR | BPF_X, 0);
  jump_always(p, L_HASH);
}

/* The source address into A: IPv4's, or IPv6's first 64 bits mixed as an ECS address's are. */
static void source(program *p, int family) {
  here(p, L_SOURCE);
  if (family == 4) {
    stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_NET_OFF + 12));
    return;
  }
  stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_NET_OFF + 8));
  stmt(p, BPF_ALU | BPF_MUL | BPF_K, 0x85EBCA6Bu);
  stmt(p, BPF_MISC | BPF_TAX, 0);
  stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_NET_OFF + 12));
  stmt(p, BPF_ALU | BPF_XOR | BPF_X, 0);
}

/* Replaces the symbolic jumps by offsets; -1 when one is out of a conditional jump's reach. */
static int resolve(program *p) {
  for (int i = 0; i < p->n; i++) {
    int targets[3] = { p->jt[i], p->jf[i], p->ja[i] };
    int offsets[3] = { 0, 0, 0 };
    for (int t = 0; t < 3; t++) {
      if (targets[t] == NEXT) continue;
      offsets[t] = p->at[targets[t]] - (i + 1);
      if (offsets[t] < 0 || (t < 2 && offsets[t] > 255)) return -1;
    }
    if (p->ja[i] != NEXT) p->insn[i].k = (uint32_t)offsets[2];
    else if (BPF_CLASS(p->insn[i].code) == BPF_JMP) {
      p->insn[i].jt = (uint8_t)offsets[0];
      p->insn[i].jf = (uint8_t)offsets[1];
    }
  }
  return 0;
}

int attach_address_steering(int fd, int family, uint32_t sockets, int client_subnet_first) {
  program p = { .n = 0 };
  if (client_subnet_first) client_subnet(&p);
  source(&p, family);
  here(&p, L_HASH);
  stmt(&p, BPF_ALU | BPF_MUL | BPF_K, 0x9E3779B1u);
  stmt(&p, BPF_ALU | BPF_RSH | BPF_K, 16);
  stmt(&p, BPF_ALU | BPF_MOD | BPF_K, sockets);
  stmt(&p, BPF_RET | BPF_A, 0);
  if (p.overflow || resolve(&p) != 0) return -2;
  struct sock_fprog prog = { .len = (unsigned short)p.n, .filter = p.insn };
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog);
}
