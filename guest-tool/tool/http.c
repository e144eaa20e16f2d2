/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter's HTTP server (see http.h). One request per connection:
 * each client is read until the empty line that ends its headers, gets
 * one response with Connection: close, and is closed. Whatever a client
 * sends, it costs at most one buffer of max_request bytes, one slot of
 * max_conns and timeout_ms of time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "wait.h"

enum { CLIENT_FREE, CLIENT_READING, CLIENT_WRITING, CLIENT_DRAINING };

typedef struct ptt_http_client {
    int fd;
    int state;
    int64_t deadline;           /* ms, CLOCK_MONOTONIC */
    char *in;                   /* max_request bytes */
    size_t in_len;
    size_t scanned;             /* bytes of in checked for line ends */
    size_t line_start;
    char *out;                  /* the response */
    size_t out_len;
    size_t out_sent;
} ptt_http_client;

struct ptt_http {
    int fd;
    unsigned port;
    char address[INET6_ADDRSTRLEN + 8];
    ptt_http_limits limits;
    int64_t accept_pause;       /* out of descriptors: no accept until */
    ptt_http_client *clients;   /* max_conns */
    struct pollfd *pfd;         /* the listening socket, then the clients */
};

static const char text_plain[] = "text/plain; charset=utf-8";

static int64_t now_ms(void)
{
    return (int64_t)(ptt_mono_ns() / 1000000);
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Internal Server Error";
    }
}

/* RFC 9110 tchar: the characters of methods and header names */
static bool is_tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z')
        || (ch >= 'A' && ch <= 'Z') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static size_t tchar_span(const char *p)
{
    size_t n = 0;

    while (is_tchar(p[n])) {
        n++;
    }
    return n;
}

/* The whole response in one buffer; NULL when out of memory. */
static char *make_response(int status, const char *type, const char *body,
                           size_t len, size_t *out_len)
{
    const char *allow = status == 405 ? "Allow: GET\r\n" : "";
    const char *fmt = "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n";
    int head = snprintf(NULL, 0, fmt, status, reason(status), type, allow,
                        len);
    char *out = head < 0 ? NULL : malloc((size_t)head + 1 + len);

    if (!out) {
        return NULL;
    }
    snprintf(out, (size_t)head + 1, fmt, status, reason(status), type,
             allow, len);
    if (len) {
        memcpy(out + head, body, len);
    }
    *out_len = (size_t)head + len;
    return out;
}

static char *make_error(int status, const char *detail, size_t *out_len)
{
    char body[160];
    int n = snprintf(body, sizeof(body), "%d %s%s%s\n", status,
                     reason(status), detail ? ": " : "", detail ? detail : "");

    return make_response(status, text_plain, body,
                         n < (int)sizeof(body) ? (size_t)n : sizeof(body) - 1,
                         out_len);
}

/*
 * Reads and drops what the client sent, so that closing the socket sends
 * FIN rather than RST (which may destroy the response before it is read).
 * Returns false at EOF or on an error, true when nothing more is there.
 */
static bool drain(int fd)
{
    char junk[4096];

    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(fd, junk, sizeof(junk), 0);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
    }
    return true;
}

/* A response sent as far as the socket takes it at once, then close. */
static void answer_and_close(int fd, int status)
{
    size_t len;
    char *out = make_error(status, NULL, &len);

    if (out) {
        while (send(fd, out, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0
               && errno == EINTR) {
            continue;
        }
        free(out);
    }
    shutdown(fd, SHUT_WR);
    drain(fd);
    close(fd);
}

static void client_close(ptt_http_client *c)
{
    if (c->fd >= 0) {
        close(c->fd);
    }
    free(c->out);
    c->fd = -1;
    c->state = CLIENT_FREE;
    c->out = NULL;
    c->in_len = c->scanned = c->line_start = 0;
    c->out_len = c->out_sent = 0;
}

static void client_drain(ptt_http_client *c)
{
    if (!drain(c->fd)) {
        client_close(c);
    }
}

/* Sends what the socket takes; once all is out, waits for the client's EOF */
static void client_write(ptt_http_client *c)
{
    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent,
                         c->out_len - c->out_sent, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                client_close(c);        /* gone: EPIPE, ECONNRESET */
            }
            return;
        }
        c->out_sent += (size_t)n;
    }
    free(c->out);
    c->out = NULL;
    shutdown(c->fd, SHUT_WR);
    c->state = CLIENT_DRAINING;
    client_drain(c);
}

static void client_respond(ptt_http_client *c, char *out, size_t len)
{
    if (!out) {
        client_close(c);
        return;
    }
    c->out = out;
    c->out_len = len;
    c->out_sent = 0;
    c->state = CLIENT_WRITING;
    client_write(c);
}

static void client_error(ptt_http_client *c, int status, const char *detail)
{
    size_t len = 0;
    char *out = make_error(status, detail, &len);

    client_respond(c, out, len);
}

/*
 * Looks at the bytes received since the last call for line ends. Returns
 * the length of the header section (up to and with its empty line) once
 * it is complete, 0 while it is not, -1 on a CR or LF not in a CRLF or a
 * NUL (the parser ends lines with NULs).
 */
static long scan_lines(ptt_http_client *c)
{
    for (size_t i = c->scanned; i < c->in_len; i++) {
        bool after_cr = i > 0 && c->in[i - 1] == '\r';

        if (after_cr != (c->in[i] == '\n') || !c->in[i]) {
            return -1;
        }
        if (after_cr) {
            if (i - 1 == c->line_start) {
                return (long)i + 1;
            }
            c->line_start = i + 1;
        }
    }
    c->scanned = c->in_len;
    return 0;
}

/*
 * "HTTP/d.d": 1 for HTTP/1.x (a minor version above 1 is taken as 1.1,
 * RFC 9112 section 2.3), 0 for other major versions, -1 if malformed
 */
static int check_version(const char *v)
{
    if (strlen(v) != 8 || strncmp(v, "HTTP/", 5) || v[6] != '.'
        || v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9') {
        return -1;
    }
    return v[5] == '1';
}

/* One header line; false when malformed. Notes a body it announces. */
static bool check_header(char *line, bool *body)
{
    size_t name = tchar_span(line);
    char *v = line + name + 1;

    if (!name || line[name] != ':') {
        return false;
    }
    for (const char *p = v; *p; p++) {
        unsigned char ch = *p;

        if (ch == 0x7f || (ch < ' ' && ch != '\t')) {
            return false;
        }
    }
    v += strspn(v, " \t");
    if (name == 14 && !strncasecmp(line, "Content-Length", 14)) {
        size_t digits = strspn(v, "0123456789");

        if (!digits || v[digits + strspn(v + digits, " \t")]) {
            return false;
        }
        *body |= strspn(v, "0") != digits;
    } else if (name == 17 && !strncasecmp(line, "Transfer-Encoding", 17)) {
        *body = true;
    }
    return true;
}

/*
 * The header section head (CRLF line ends, NUL-terminated here at each
 * CR): 0 with *path for a good GET, else the status of the error.
 */
static int parse_request(char *head, size_t len, const char **path,
                         const char **detail)
{
    char *line = head, *target, *version, *end;
    size_t mlen, tlen;
    bool body = false;
    int v;

    for (size_t i = 0; i < len; i++) {
        if (head[i] == '\r') {
            head[i] = '\0';
        }
    }
    mlen = tchar_span(line);
    target = line + mlen + 1;
    for (tlen = 0; line[mlen] == ' ' && target[tlen] > ' '
         && target[tlen] < 0x7f; tlen++) {
        continue;
    }
    version = target + tlen + 1;
    if (!mlen || line[mlen] != ' ' || !tlen || target[tlen] != ' '
        || (v = check_version(version)) < 0) {
        *detail = "malformed request line";
        return 400;
    }
    if (target[0] != '/') {
        *detail = "the target is not a path";
        return 400;
    }
    /* header lines: after each NUL (was CR) comes the LF, then the line */
    end = head + len - 2;
    for (line = version + strlen(version) + 2; line < end;
         line += strlen(line) + 2) {
        if (!check_header(line, &body)) {
            *detail = "malformed header line";
            return 400;
        }
    }
    if (!v) {
        return 505;
    }
    if (mlen != 3 || strncmp(head, "GET", 3)) {
        return 405;
    }
    if (body) {
        *detail = "a request with a body";
        return 400;
    }
    target[tlen] = '\0';
    target[strcspn(target, "?")] = '\0';
    *path = target;
    return 0;
}

static void client_handle(ptt_http_client *c, size_t head_len,
                          ptt_http_handler handler, void *opaque)
{
    ptt_http_response resp = { 0, NULL, 0, NULL };
    const char *path = NULL, *detail = NULL;
    int status = parse_request(c->in, head_len, &path, &detail);
    size_t len = 0;
    char *out;

    if (status) {
        client_error(c, status, detail);
        return;
    }
    handler(opaque, path, &resp);
    if (resp.status != 200 && resp.status != 404) {
        free(resp.body);
        client_error(c, 500, "the handler failed");
        return;
    }
    if (!resp.body) {
        out = make_error(resp.status, NULL, &len);
    } else {
        out = make_response(resp.status, resp.content_type
                            ? resp.content_type : text_plain,
                            resp.body, resp.len, &len);
    }
    free(resp.body);
    client_respond(c, out, len);
}

/* Reads what is there; answers once the header section is complete. */
static void client_read(ptt_http *s, ptt_http_client *c,
                        ptt_http_handler handler, void *opaque)
{
    for (;;) {
        size_t room = s->limits.max_request - c->in_len;
        ssize_t n;
        long head;

        if (!room) {
            client_error(c, 431, NULL);
            return;
        }
        n = recv(c->fd, c->in + c->in_len, room, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n <= 0) {
            client_close(c);            /* gone before its request ended */
            return;
        }
        c->in_len += (size_t)n;
        head = scan_lines(c);
        if (head < 0) {
            client_error(c, 400, "a NUL or a line end other than CRLF");
            return;
        }
        if (head > 0) {
            client_handle(c, (size_t)head, handler, opaque);
            /*
             * The time the handler took is not the client's: it gets its
             * timeout afresh to take the response, which a long scrape
             * would otherwise cut short of its Content-Length.
             */
            if (c->state == CLIENT_WRITING) {
                c->deadline = now_ms() + s->limits.timeout_ms;
            }
            return;
        }
    }
}

/* Accepts what is pending; -1 when the listening socket fails. */
static int accept_clients(ptt_http *s, int64_t now)
{
    for (int i = 0; i < 64; i++) {
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        ptt_http_client *c = NULL;

        if (fd < 0) {
            switch (errno) {
            case EAGAIN:
#if EWOULDBLOCK != EAGAIN
            case EWOULDBLOCK:
#endif
                return 0;
            case EMFILE: case ENFILE: case ENOBUFS: case ENOMEM:
                /* the connection stays pending: do not spin on it */
                s->accept_pause = now + 100;
                return 0;
            case EBADF: case EINVAL: case ENOTSOCK: case EFAULT:
                return -1;
            default:
                continue;               /* that connection failed */
            }
        }
        for (unsigned j = 0; j < s->limits.max_conns && !c; j++) {
            c = s->clients[j].state == CLIENT_FREE ? &s->clients[j] : NULL;
        }
        if (!c) {
            answer_and_close(fd, 503);
            continue;
        }
        c->fd = fd;
        c->state = CLIENT_READING;
        c->deadline = now + s->limits.timeout_ms;
    }
    return 0;
}

/* Closes the clients whose time is up; returns the earliest deadline. */
static int64_t expire_clients(ptt_http *s, int64_t now, int64_t wake)
{
    for (unsigned i = 0; i < s->limits.max_conns; i++) {
        ptt_http_client *c = &s->clients[i];

        if (c->state == CLIENT_FREE) {
            continue;
        }
        if (now < c->deadline) {
            wake = c->deadline < wake ? c->deadline : wake;
            continue;
        }
        if (c->state == CLIENT_READING) {
            answer_and_close(c->fd, 408);
            c->fd = -1;
        }
        client_close(c);
    }
    return wake;
}

int ptt_http_serve(ptt_http *s, ptt_http_handler handler, void *opaque,
                   volatile sig_atomic_t *stop, int timeout_ms)
{
    int64_t end = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
    sigset_t old, during;
    int ret = 0, err = 0;

    /* *stop is checked with SIGINT and SIGTERM blocked: none is missed */
    ptt_block_stops(&old, &during);
    /* a timeout of 0 still makes one pass */
    do {
        int64_t now = now_ms();
        int64_t wake = expire_clients(s, now, end);
        struct timespec ts, *tsp = NULL;
        bool listening = now >= s->accept_pause;

        if (stop && *stop) {
            break;
        }
        if (!listening && s->accept_pause < wake) {
            wake = s->accept_pause;
        }
        if (wake != INT64_MAX) {
            wake = wake > now ? wake - now : 0;
            ts.tv_sec = wake / 1000;
            ts.tv_nsec = wake % 1000 * 1000000;
            tsp = &ts;
        }
        s->pfd[0].fd = listening ? s->fd : -1;
        for (unsigned i = 0; i < s->limits.max_conns; i++) {
            ptt_http_client *c = &s->clients[i];

            s->pfd[i + 1].fd = c->fd;
            s->pfd[i + 1].events = c->state == CLIENT_WRITING ? POLLOUT
                                                              : POLLIN;
            s->pfd[i + 1].revents = 0;
        }
        s->pfd[0].revents = 0;
        if (ppoll(s->pfd, s->limits.max_conns + 1, tsp, &during) < 0) {
            if (errno == EINTR) {
                continue;
            }
            ret = -1;
            err = errno;
            break;
        }
        for (unsigned i = 0; i < s->limits.max_conns; i++) {
            ptt_http_client *c = &s->clients[i];

            if (!s->pfd[i + 1].revents || c->fd < 0) {
                continue;
            }
            if (s->pfd[i + 1].revents & POLLNVAL) {
                c->fd = -1;
                client_close(c);
            } else if (c->state == CLIENT_READING) {
                client_read(s, c, handler, opaque);
            } else if (c->state == CLIENT_WRITING) {
                client_write(c);
            } else {
                client_drain(c);
            }
        }
        if (s->pfd[0].revents & POLLNVAL) {
            ret = -1;
            err = EBADF;
            break;
        }
        if (s->pfd[0].revents && accept_clients(s, now_ms()) < 0) {
            ret = -1;
            err = errno;
            break;
        }
    } while (now_ms() < end);
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return ret;
}

static bool __attribute__((format(printf, 5, 6)))
fail(char *msg, size_t msg_len, bool *usage, bool is_usage, const char *fmt,
     ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
    *usage = is_usage;
    return false;
}

/*
 * Splits "[ADDR:]PORT" into host and port, strictly: an address that
 * looks numeric must be one, and *numeric tells an IPv6 address in
 * brackets. False with a message when malformed.
 */
static bool split_listen(const char *listen, char *host, size_t host_len,
                         char *port, size_t port_len, bool *numeric,
                         char *msg, size_t msg_len, bool *usage)
{
    const char *colon = strrchr(listen, ':');
    const char *p = colon ? colon + 1 : listen;
    const char *h = listen;
    size_t hlen = colon ? (size_t)(colon - listen) : 0;
    size_t digits = strspn(p, "0123456789");
    unsigned char addr[sizeof(struct in6_addr)];
    unsigned long value = 0;

    *numeric = listen[0] == '[';
    if (!colon) {
        h = "127.0.0.1";
        hlen = strlen(h);
    } else if (*numeric) {
        if (hlen < 3 || listen[hlen - 1] != ']') {
            goto malformed;
        }
        h++;
        hlen -= 2;
    } else if (!hlen || strspn(h, "abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
               < hlen) {
        goto malformed;                 /* also an IPv6 address bare */
    }
    if (hlen >= host_len || !digits || p[digits]) {
        goto malformed;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    if (*numeric ? inet_pton(AF_INET6, host, addr) != 1
        : strspn(host, "0123456789.") == hlen
          && inet_pton(AF_INET, host, addr) != 1) {
        goto malformed;
    }
    for (size_t i = 0; i < digits && value <= 65535; i++) {
        value = value * 10 + (unsigned long)(p[i] - '0');
    }
    if (value > 65535) {
        return fail(msg, msg_len, usage, true,
                    "--listen: '%s': PORT is not in 0..65535", listen);
    }
    snprintf(port, port_len, "%lu", value);
    return true;

malformed:
    return fail(msg, msg_len, usage, true,
                "--listen: '%s' is not [ADDR:]PORT", listen);
}

/* A non-blocking listening socket on ai; -1 with *step and *err if not */
static int open_listener(const struct addrinfo *ai, const char **step,
                         int *err)
{
    int one = 1, zero = 0;
    int fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);

    if (fd < 0) {
        *step = "cannot create a socket";
        *err = errno;
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6) {
        /* "[::]" serves IPv4 clients too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        *step = "cannot bind";
    } else if (listen(fd, 64) < 0) {
        *step = "cannot listen";
    } else {
        return fd;
    }
    *err = errno;
    close(fd);
    return -1;
}

/* The bound address and port, for ptt_http_port and ptt_http_address */
static bool name_listener(ptt_http *s)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char ip[INET6_ADDRSTRLEN], port[8];
    bool v6;

    if (getsockname(s->fd, (struct sockaddr *)&ss, &len) < 0
        || getnameinfo((struct sockaddr *)&ss, len, ip, sizeof(ip), port,
                       sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)) {
        return false;
    }
    v6 = ss.ss_family == AF_INET6;
    s->port = (unsigned)strtoul(port, NULL, 10);
    snprintf(s->address, sizeof(s->address), "%s%s%s:%u", v6 ? "[" : "",
             ip, v6 ? "]" : "", s->port);
    return true;
}

ptt_http *ptt_http_new(const char *listen, const ptt_http_limits *limits,
                       char *msg, size_t msg_len, bool *usage)
{
    static const ptt_http_limits defaults = PTT_HTTP_LIMITS_DEFAULT;
    struct addrinfo hints = { 0 }, *res, *ai;
    const char *step = "cannot bind";
    char host[256], port[8];
    bool numeric, nomem;
    int err = 0, gai;
    ptt_http *s;

    *usage = false;
    if (!split_listen(listen, host, sizeof(host), port, sizeof(port),
                      &numeric, msg, msg_len, usage)) {
        return NULL;
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
                     | (numeric ? AI_NUMERICHOST : 0);
    gai = getaddrinfo(host, port, &hints, &res);
    if (gai) {
        fail(msg, msg_len, usage, false, "--listen %s: cannot resolve %s: %s",
             listen, host, gai == EAI_SYSTEM ? strerror(errno)
                                             : gai_strerror(gai));
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        freeaddrinfo(res);
        fail(msg, msg_len, usage, false, "--listen %s: out of memory",
             listen);
        return NULL;
    }
    s->fd = -1;
    s->limits = limits ? *limits : defaults;
    /* the first address that works, as for any server of a host name */
    for (ai = res; ai && s->fd < 0; ai = ai->ai_next) {
        s->fd = open_listener(ai, &step, &err);
    }
    freeaddrinfo(res);
    if (s->fd < 0 || !name_listener(s)) {
        fail(msg, msg_len, usage, false, "--listen %s: %s: %s", listen,
             s->fd < 0 ? step : "cannot name the socket",
             strerror(s->fd < 0 ? err : errno));
        ptt_http_free(s);
        return NULL;
    }
    /* one more than needed: calloc(0) may well be NULL */
    s->clients = calloc(s->limits.max_conns + 1, sizeof(*s->clients));
    s->pfd = calloc(s->limits.max_conns + 1, sizeof(*s->pfd));
    nomem = !s->clients || !s->pfd;
    for (unsigned i = 0; s->clients && i < s->limits.max_conns; i++) {
        s->clients[i].fd = -1;
        s->clients[i].in = malloc(s->limits.max_request + 1);
        nomem |= !s->clients[i].in;
    }
    if (nomem) {
        fail(msg, msg_len, usage, false, "--listen %s: out of memory",
             listen);
        ptt_http_free(s);
        return NULL;
    }
    s->pfd[0].events = POLLIN;
    return s;
}

void ptt_http_free(ptt_http *s)
{
    if (!s) {
        return;
    }
    for (unsigned i = 0; s->clients && i < s->limits.max_conns; i++) {
        client_close(&s->clients[i]);
        free(s->clients[i].in);
    }
    if (s->fd >= 0) {
        close(s->fd);
    }
    free(s->clients);
    free(s->pfd);
    free(s);
}

unsigned ptt_http_port(const ptt_http *s)
{
    return s->port;
}

const char *ptt_http_address(const ptt_http *s)
{
    return s->address;
}
