#!/usr/bin/env python3
# Shares of a DoH server profile by owner (bench/results/2026-11-history.md, "DoH CPU per request"): reads the output of
# `perf script -F tid,ip,sym` (bench/dns/doh-profile.sh with PERF=1 and node --perf-basic-prof) and charges each
# sample to the innermost frame that names an owner: a system call, the collector, OpenSSL, then the
# JavaScript function by file. Usage: perf script -i OUT/perf.data -F tid,ip,sym > s.txt; bench/dns/perf-shares.py s.txt
import sys, re, collections
rules = [
 ('gc', re.compile(r'Scaveng|MarkCompact|v8::internal::Heap::|GCTracer|Sweeper|ConcurrentMarking|MemoryAllocator|IncrementalMarking|MinorMS|HeapObject::SizeFromMap|BasicMemoryChunk|PagedSpace|NewSpace')),
 ('upstream send syscall (sendmmsg)', re.compile(r'__sendmmsg|__x64_sys_sendmmsg')),
 ('upstream recv syscall (recvmmsg)', re.compile(r'__recvmmsg|recvmmsg')),
 ('TLS socket write syscall', re.compile(r'__GI___libc_write|__libc_write|writev|__x64_sys_write')),
 ('TLS socket read syscall', re.compile(r'__libc_read|__GI___libc_read|__x64_sys_read\b')),
 ('epoll/timers (libuv)', re.compile(r'epoll_pwait|epoll_wait|uv__io_poll$|clock_gettime|uv__hrtime')),
 ('TLS crypto (OpenSSL)', re.compile(r'SSL_|ssl3_|tls1?3?_|aes|gcm|EVP_|BIO_|OPENSSL|CRYPTO_|ossl_|sha|ghash|chacha|poly1305')),
 ('JS h2 (dns/h2)', re.compile(r'JS:.*dist/dns/h2/')),
 ('JS exchange (doh-exchange, doh-front)', re.compile(r'JS:.*dist/dns/doh-')),
 ('JS upstream (upstream, socket-pool, engine/udp)', re.compile(r'JS:.*dist/(dns/upstream|engine/udp)')),
 ('JS stats writer', re.compile(r'JS:.*dist/engine/stats')),
 ('JS dispatch+policy+wire', re.compile(r'JS:.*dist/')),
 ('JS node internals (streams, events, timers)', re.compile(r'JS:.*node:|JS:.*node_modules|JS:')),
 ('kernel scheduling/irq', re.compile(r'pvm_irq_enable|finish_task_switch|__schedule')),
]
cnt = collections.Counter(); total = 0
def flush(stack):
    global total
    if not stack: return
    total += 1
    for f in stack:
        for name, rx in rules:
            if name.startswith('kernel'): continue
            if rx.search(f): cnt[name] += 1; return
    for f in stack:
        if rules[-1][1].search(f): cnt[rules[-1][0]] += 1; return
    cnt['other native (node C++, libuv, v8 runtime)'] += 1
stack = []
for line in open(sys.argv[1]):
    if not line.strip():
        flush(stack); stack = []; continue
    if line[0] != '\t' and not line.startswith(' ' * 8): flush(stack); stack = []; continue
    parts = line.strip().split(' ', 1)
    stack.append(parts[1] if len(parts) > 1 else '')
flush(stack)
for k, v in cnt.most_common(): print(f'{100*v/total:5.1f}%  {k}')
print('samples', total)
