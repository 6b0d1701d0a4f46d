/* Steering a SO_REUSEPORT group by client address (steering.c). */
#ifndef FILTERD_STEERING_H
#define FILTERD_STEERING_H
#include <stdint.h>

/*
 * Attaches the program to `fd`'s group of `sockets` sockets: by source address, or by the query's
 * EDNS Client Subnet address first when `client_subnet_first`. 0, or -1 with errno from setsockopt,
 * or -2 when the program could not be laid out.
 */
int attach_address_steering(int fd, int family, uint32_t sockets, int client_subnet_first);

#endif
