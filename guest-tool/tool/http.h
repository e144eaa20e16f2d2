/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter's HTTP server: plain sockets, one thread, poll(). It serves
 * GET requests for the paths its handler knows and nothing else, with
 * strict limits on what a client may cost (see ptt_http_limits).
 */
#ifndef PTT_HTTP_H
#define PTT_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ptt_http_limits {
    size_t max_request;         /* request line + headers, bytes (8192) */
    unsigned max_conns;         /* connections served at once (4) */
    unsigned timeout_ms;        /* to send its request, and again to */
                                /* take the response (5000) */
} ptt_http_limits;

#define PTT_HTTP_LIMITS_DEFAULT { 8192, 4, 5000 }

/*
 * A response the handler fills for a GET of path (the request target
 * without its query string, e.g. "/metrics"): status 200 or 404, a
 * malloc'ed body the server frees, and its content type (static). A NULL
 * body gets a short text/plain one; another status is answered with 500.
 */
typedef struct ptt_http_response {
    int status;
    char *body;
    size_t len;
    const char *content_type;
} ptt_http_response;

typedef void (*ptt_http_handler)(void *opaque, const char *path,
                                 ptt_http_response *resp);

typedef struct ptt_http ptt_http;

/*
 * Listen on "[ADDR:]PORT": PORT alone is 127.0.0.1:PORT; ADDR is an IPv4
 * address, a host name, or an IPv6 address in brackets ("[::1]:9100").
 * PORT 0 picks a free port (ptt_http_port tells which); limits NULL are
 * PTT_HTTP_LIMITS_DEFAULT. NULL with a one-line message in msg when the
 * address is malformed or cannot be bound; *usage is then true for a
 * malformed argument (exit code 2).
 */
ptt_http *ptt_http_new(const char *listen, const ptt_http_limits *limits,
                       char *msg, size_t msg_len, bool *usage);
void ptt_http_free(ptt_http *s);
unsigned ptt_http_port(const ptt_http *s);
/* "127.0.0.1:9100" or "[::1]:9100", for messages */
const char *ptt_http_address(const ptt_http *s);

/*
 * Serve until *stop is set (by a signal handler: poll() is interrupted) or
 * timeout_ms (< 0: no limit, 0: one pass) passes; the handler runs for
 * each good GET. SIGINT and SIGTERM are blocked but for the wait itself,
 * so that a stop is never missed. Returns 0, or -1 with errno on a
 * failure of the listening socket.
 *
 * One request per connection, then Connection: close. Besides the
 * handler's 200 and 404: 400 for a malformed request line or header line
 * (also a line end other than CRLF) and for a request with a body, 405
 * with Allow: GET for any other method, 505 for versions other than
 * HTTP/1.0 and 1.1, 431 for a request over max_request, 408 for one not
 * complete after timeout_ms, 503 for a connection over max_conns.
 */
int ptt_http_serve(ptt_http *s, ptt_http_handler handler, void *opaque,
                   volatile sig_atomic_t *stop, int timeout_ms);

#endif
