/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter's HTTP server (guest-tool/tool/http.c): the input is what
 * one client sends to a server on 127.0.0.1, served in passes of
 * ptt_http_serve by this thread. The first byte says how it is sent:
 *
 *   bits 0-3  0: at once; n: in pieces of n bytes, a pass between them
 *   bits 4-6  0-5: then the write side is shut down; 6: the client closes
 *             without reading; 7: it stays open (an unfinished request
 *             waits for the 408)
 *   bit 7     one client connects before (it holds the other slot) and
 *             one after, which must get a 503
 *
 * The rest, cut at MAX_SEND bytes, is the request. The handler knows
 * /metrics, / and /big (more than a socket takes at once: the server
 * writes it over several passes), fails for /fail and has nothing else
 * (404). Checked for any input:
 * the response has the server's form (status line of a known status,
 * Content-Type, Content-Length of the body, Allow: GET with 405 only,
 * Connection: close), its status is the one an independent reading of the
 * request owes (see expected()), the handler runs only for a good GET and
 * with its path, the server holds no descriptor after the exchange, and a
 * good GET /metrics is answered after every input. A server that misses
 * its deadline may answer 408 or nothing: only then, by the clock, are
 * other outcomes let pass. A broken rule aborts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

#define MAX_REQUEST 1024
#define MAX_CONNS 2
#define TIMEOUT_MS 20
#define MAX_SEND (4 * MAX_REQUEST)
#define HUNG_MS (TIMEOUT_MS + 5000)     /* no exchange may last longer */
#define BIG (8 << 20)             /* more than a socket takes at once */
#define REPLY_MAX (BIG + 4096)

#define CTL_PIECE 0x0f
#define CTL_MODE 0x70
#define CTL_HOG 0x80
#define MODE_CLOSE 6
#define MODE_KEEP 7

#define METRICS "# TYPE up gauge\nup 1\n"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define ROOT "<html><body><a href=\"/metrics\">metrics</a></body></html>\n"
#define TEXT_PLAIN "text/plain; charset=utf-8"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ptt_http *server;
static struct sockaddr_in server_addr;

/* the handler's calls since the last reset */
static unsigned calls;
static char called_path[MAX_REQUEST + 1];

typedef struct reply {
    char buf[REPLY_MAX + 1];      /* NUL-terminated */
    size_t len;
    bool eof;                   /* the server closed its side */
    bool reset;                 /* ... with an error (a reset) */
} reply;

typedef struct parsed {
    int status;
    const char *type;
    size_t type_len;
    const char *body;
    size_t body_len;
} parsed;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * "/metrics", "/" and "/big" (BIG bytes of 'x', written over several
 * passes) are found, "/fail" fails (500), the rest is 404
 */
static int handler_status(const char *path, size_t len)
{
    if ((len == 8 && !memcmp(path, "/metrics", 8))
        || (len == 1 && path[0] == '/')
        || (len == 4 && !memcmp(path, "/big", 4))) {
        return 200;
    }
    return len == 5 && !memcmp(path, "/fail", 5) ? 500 : 404;
}

static void handler(void *opaque, const char *path, ptt_http_response *resp)
{
    size_t len = strlen(path);

    if (len > MAX_REQUEST) {
        abort();
    }
    calls++;
    memcpy(called_path, path, len + 1);
    switch (handler_status(path, len)) {
    case 200:
        resp->status = 200;
        if (!strcmp(path, "/big")) {
            resp->body = malloc(BIG);
            if (!resp->body) {
                abort();
            }
            memset(resp->body, 'x', BIG);
            resp->len = BIG;
            break;
        }
        if (path[1]) {
            resp->body = strdup(METRICS);
            resp->content_type = METRICS_TYPE;
        } else {
            resp->body = strdup(ROOT);      /* the server's content type */
        }
        if (!resp->body) {
            abort();
        }
        resp->len = strlen(resp->body);
        break;
    case 500:
        resp->status = 302;                 /* not the handler's to give */
        resp->body = strdup("moved\n");
        resp->len = resp->body ? strlen(resp->body) : 0;
        break;
    default:
        resp->status = 404;                 /* no body: the server's */
        break;
    }
}

static void serve(int timeout_ms)
{
    if (ptt_http_serve(server, handler, NULL, NULL, timeout_ms) != 0) {
        abort();
    }
}

/* the descriptors this process holds */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    if (!d) {
        abort();
    }
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n;
}

/* Serves until the server holds no client's descriptor (fds before) */
static void settle(int fds)
{
    int64_t t0 = now_ms();
    int n;

    for (int passes = 0; (n = count_fds()) != fds; passes++) {
        if (n < fds || now_ms() - t0 > HUNG_MS) {
            abort();
        }
        serve(passes < 2 ? 0 : 1);
    }
}

/* A connected, then non-blocking, client socket */
static int client(void)
{
    for (int tries = 0;; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0) {
            abort();
        }
        if (connect(fd, (struct sockaddr *)&server_addr,
                    sizeof(server_addr)) == 0) {
            if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
                abort();
            }
            return fd;
        }
        /* local ports all in TIME_WAIT: they come back within a minute */
        if ((errno != EADDRNOTAVAIL && errno != EINTR) || tries == 6000) {
            abort();
        }
        close(fd);
        usleep(10000);
    }
}

/* Reads what is there; true if anything came (data or the end) */
static bool reply_read(int fd, reply *r)
{
    bool any = false;

    while (!r->eof) {
        ssize_t n;

        if (r->len == REPLY_MAX) {
            abort();                /* no response here is so long */
        }
        n = recv(fd, r->buf + r->len, REPLY_MAX - r->len, 0);
        if (n > 0) {
            r->len += (size_t)n;
            r->buf[r->len] = '\0';
            any = true;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            r->eof = true;
            r->reset = n < 0;
            any = true;
        }
    }
    return any;
}

/*
 * Serves and reads until the server closes fd's connection: passes that
 * return at once while there is work, then of 1 ms (a wait for a deadline)
 */
static void reply_wait(int fd, reply *r, int64_t t0)
{
    unsigned idle = 0;

    while (!r->eof) {
        serve(idle < 2 ? 0 : 1);
        idle = reply_read(fd, r) ? 0 : idle + 1;
        if (now_ms() - t0 > HUNG_MS) {
            abort();
        }
    }
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
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return NULL;
    }
}

static bool field_is(const char *p, size_t len, const char *s)
{
    return len == strlen(s) && !memcmp(p, s, len);
}

/*
 * The status of a whole response in the server's form, 0 for none, -1 for
 * anything else; the content type and the body in p.
 */
static int reply_parse(const reply *r, parsed *p)
{
    const char *b = r->buf, *end = r->buf + r->len, *head_end, *line, *eol;
    const char *why;
    bool length = false, allow = false, conn = false;
    size_t clen = 0;
    int status;

    memset(p, 0, sizeof(*p));
    if (!r->len) {
        return 0;
    }
    head_end = memmem(b, r->len, "\r\n\r\n", 4);
    if (!head_end || r->len < 13 || memcmp(b, "HTTP/1.1 ", 9)
        || b[9] < '1' || b[9] > '5' || b[10] < '0' || b[10] > '9'
        || b[11] < '0' || b[11] > '9' || b[12] != ' ') {
        return -1;
    }
    status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    why = reason(status);
    eol = memmem(b, (size_t)(head_end + 2 - b), "\r\n", 2);
    if (!why || !field_is(b + 13, (size_t)(eol - b - 13), why)) {
        return -1;
    }
    for (line = eol + 2; line < head_end + 2; line = eol + 2) {
        const char *colon;
        size_t n;

        eol = memmem(line, (size_t)(head_end + 2 - line), "\r\n", 2);
        colon = memchr(line, ':', (size_t)(eol - line));
        if (!colon || colon + 1 == eol || colon[1] != ' ') {
            return -1;
        }
        n = (size_t)(eol - colon - 2);
        if (field_is(line, (size_t)(colon - line), "Content-Type")
            && !p->type) {
            p->type = colon + 2;
            p->type_len = n;
        } else if (field_is(line, (size_t)(colon - line), "Content-Length")
                   && !length && n && n < 8
                   && strspn(colon + 2, "0123456789") == n) {
            length = true;
            clen = strtoul(colon + 2, NULL, 10);
        } else if (field_is(line, (size_t)(colon - line), "Allow") && !allow
                   && field_is(colon + 2, n, "GET")) {
            allow = true;
        } else if (field_is(line, (size_t)(colon - line), "Connection")
                   && !conn && field_is(colon + 2, n, "close")) {
            conn = true;
        } else {
            return -1;
        }
    }
    p->body = head_end + 4;
    p->body_len = (size_t)(end - p->body);
    if (!p->type || !length || !conn || allow != (status == 405)
        || p->body_len != clen) {
        return -1;
    }
    if (status != 200) {
        /* the server's own text: "404 Not Found\n", "400 Bad Request: " */
        char start[8];

        snprintf(start, sizeof(start), "%d ", status);
        if (p->body_len < 5 || memcmp(p->body, start, 4)
            || p->body[p->body_len - 1] != '\n'
            || !field_is(p->type, p->type_len, TEXT_PLAIN)) {
            return -1;
        }
    }
    p->status = status;
    return status;
}

/* RFC 9110 tchar */
static bool tchar(uint8_t ch)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";

    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
        || (ch >= '0' && ch <= '9') || (ch && memchr(extra, ch, 15));
}

static bool ows(uint8_t ch)
{
    return ch == ' ' || ch == '\t';
}

/* the index of the CR that ends the line at i (the head ends in CRLF) */
static size_t line_end(const uint8_t *h, size_t i)
{
    while (h[i] != '\r') {
        i++;
    }
    return i;
}

/* A header line h[0..n): true if good; *body if it announces a body */
static bool header_ok(const uint8_t *h, size_t n, bool *body)
{
    size_t k = 0, v;

    while (k < n && tchar(h[k])) {
        k++;
    }
    if (!k || k == n || h[k] != ':') {
        return false;
    }
    for (size_t i = k + 1; i < n; i++) {
        if (h[i] == 0x7f || (h[i] < ' ' && h[i] != '\t')) {
            return false;
        }
    }
    for (v = k + 1; v < n && ows(h[v]); v++) {
        continue;
    }
    if (k == 14 && !strncasecmp((const char *)h, "content-length", 14)) {
        size_t d = v;
        bool nonzero = false;

        while (d < n && h[d] >= '0' && h[d] <= '9') {
            nonzero |= h[d++] != '0';
        }
        if (d == v) {
            return false;
        }
        while (d < n && ows(h[d])) {
            d++;
        }
        if (d != n) {
            return false;
        }
        *body |= nonzero;
    } else if (k == 17
               && !strncasecmp((const char *)h, "transfer-encoding", 17)) {
        *body = true;
    }
    return true;
}

/* The status owed to the header section h[0..len) (ends in CRLF CRLF) */
static int parse_head(const uint8_t *h, size_t len, size_t *path,
                      size_t *path_len)
{
    size_t eol = line_end(h, 0), m = 0, t, tl = 0, v, p;
    bool body = false;

    while (m < eol && tchar(h[m])) {
        m++;
    }
    if (!m || h[m] != ' ') {
        return 400;
    }
    t = m + 1;
    while (t + tl < eol && h[t + tl] > ' ' && h[t + tl] < 0x7f) {
        tl++;
    }
    v = t + tl + 1;
    if (!tl || h[t + tl] != ' ' || eol < v || eol - v != 8
        || memcmp(h + v, "HTTP/", 5) || h[v + 5] < '0' || h[v + 5] > '9'
        || h[v + 6] != '.' || h[v + 7] < '0' || h[v + 7] > '9') {
        return 400;
    }
    if (h[t] != '/') {
        return 400;
    }
    for (size_t l = eol + 2; l < len - 2; l = line_end(h, l) + 2) {
        if (!header_ok(h + l, line_end(h, l) - l, &body)) {
            return 400;
        }
    }
    if (h[v + 5] != '1') {
        return 505;         /* HTTP/1.x of any minor version is served */
    }
    if (m != 3 || memcmp(h, "GET", 3)) {
        return 405;
    }
    if (body) {
        return 400;
    }
    for (p = 0; p < tl && h[t + p] != '?'; p++) {
        continue;
    }
    *path = t;
    *path_len = p;
    return handler_status((const char *)h + t, p);
}

/*
 * The status owed to a client that sent req[0..len) and then shut down
 * its write side (eof) or waited: 0 for none (the connection is closed).
 * For a good GET also its path, req[*path..][0..*path_len).
 */
static int expected(const uint8_t *req, size_t len, bool eof, size_t *path,
                    size_t *path_len)
{
    size_t n = len < MAX_REQUEST ? len : MAX_REQUEST;

    *path = *path_len = 0;
    for (size_t i = 0; i < n; i++) {
        bool lf = req[i] == '\n', after_cr = i && req[i - 1] == '\r';

        if (!req[i] || lf != after_cr) {
            return 400;
        }
        if (lf && (i == 1 || req[i - 2] == '\n')) {
            return parse_head(req, i + 1, path, path_len);
        }
    }
    if (len >= MAX_REQUEST) {
        return 431;
    }
    return eof ? 0 : 408;
}

/* The handler's calls must be the ones the request owes */
static void check_calls(int want, const uint8_t *req, size_t path,
                        size_t path_len)
{
    bool handled = want == 200 || want == 404 || want == 500;

    if (calls > 1) {
        abort();
    }
    if (calls && (!handled || strlen(called_path) != path_len
                  || memcmp(called_path, req + path, path_len))) {
        abort();
    }
}

/* A response of the handler: its body and type */
static void check_handled(const parsed *p, const char *path)
{
    if (p->status == 200 && !strcmp(path, "/big")) {
        if (p->body_len != BIG || strspn(p->body, "x") != BIG
            || !field_is(p->type, p->type_len, TEXT_PLAIN)) {
            abort();
        }
    } else if (p->status == 200) {
        bool metrics = !strcmp(path, "/metrics");

        if (!field_is(p->body, p->body_len, metrics ? METRICS : ROOT)
            || !field_is(p->type, p->type_len,
                         metrics ? METRICS_TYPE : TEXT_PLAIN)) {
            abort();
        }
    } else if (p->status == 404) {
        if (!field_is(p->body, p->body_len, "404 Not Found\n")) {
            abort();
        }
    }
}

static void exchange(unsigned ctl, const uint8_t *req, size_t len)
{
    unsigned piece = ctl & CTL_PIECE, mode = (ctl & CTL_MODE) >> 4;
    bool hog = ctl & CTL_HOG, broken = false;
    int hog_fd = -1, extra_fd = -1, fd, want, got;
    int64_t t0 = now_ms(), elapsed;
    static reply r, extra;
    size_t sent = 0, path, path_len;
    parsed p;

    calls = 0;
    r.len = extra.len = 0;
    r.eof = r.reset = extra.eof = extra.reset = false;
    if (hog) {
        hog_fd = client();
    }
    fd = client();
    if (hog) {
        extra_fd = client();
    }
    serve(0);                               /* accepts them */
    while (sent < len && !broken) {
        size_t n = piece && piece < len - sent ? piece : len - sent;
        ssize_t k = send(fd, req + sent, n, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (k > 0) {
            sent += (size_t)k;
            if (piece) {
                serve(0);
            }
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            serve(1);
        } else if (k < 0 && errno != EINTR) {
            broken = true;                  /* the server closed */
        }
        if (now_ms() - t0 > HUNG_MS) {
            abort();
        }
    }
    if (mode == MODE_CLOSE) {
        close(fd);
        fd = -1;
    } else if (mode != MODE_KEEP) {
        shutdown(fd, SHUT_WR);
    }
    if (fd >= 0) {
        reply_wait(fd, &r, t0);
    }
    elapsed = now_ms() - t0;
    if (hog) {
        /* answered at once, and with its slot taken by the hog */
        reply_wait(extra_fd, &extra, t0);
        if (reply_parse(&extra, &p) != 503 || extra.reset) {
            abort();
        }
        close(extra_fd);
        close(hog_fd);
    }

    want = expected(req, sent, mode != MODE_KEEP, &path, &path_len);
    check_calls(want, req, path, path_len);
    if (fd < 0) {
        return;                             /* closed without reading */
    }
    close(fd);
    got = reply_parse(&r, &p);
    if (elapsed < TIMEOUT_MS) {
        /* no deadline can have passed: exactly what the request owes */
        if (broken || r.reset || got != want) {
            abort();
        }
    } else if (got != want && got != 408 && got > 0) {
        abort();                /* late: 408, or nothing, or cut short */
    }
    if (got == 200 || got == 404 || got == 500) {
        if (calls != 1) {
            abort();
        }
        check_handled(&p, called_path);
    }
}

/* A good GET /metrics must be answered (again if a deadline passed) */
static void check_health(void)
{
    static const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    static reply r;

    for (int tries = 0;; tries++) {
        int64_t t0 = now_ms();
        int fd = client();
        parsed p;

        calls = 0;
        r.len = 0;
        r.eof = r.reset = false;
        if (send(fd, get, sizeof(get) - 1, MSG_NOSIGNAL) != sizeof(get) - 1) {
            abort();
        }
        shutdown(fd, SHUT_WR);
        reply_wait(fd, &r, t0);
        close(fd);
        if (reply_parse(&r, &p) == 200 && calls == 1) {
            check_handled(&p, called_path);
            return;
        }
        if (now_ms() - t0 < TIMEOUT_MS || tries == 3) {
            abort();
        }
    }
}

static void free_server(void)
{
    ptt_http_free(server);
    server = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    ptt_http_limits limits = { MAX_REQUEST, MAX_CONNS, TIMEOUT_MS };
    char msg[256];
    bool usage;

    server = ptt_http_new("127.0.0.1:0", &limits, msg, sizeof(msg), &usage);
    if (!server) {
        fprintf(stderr, "fuzz-http: %s\n", msg);
        abort();
    }
    server_addr.sin_family = AF_INET;
    server_addr.sin_port = htons(ptt_http_port(server));
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    atexit(free_server);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned ctl = size ? data[0] : 0;
    size_t len = size ? size - 1 : 0;
    int fds = count_fds();

    exchange(ctl, data + (size ? 1 : 0), len < MAX_SEND ? len : MAX_SEND);
    settle(fds);
    check_health();
    settle(fds);
    return 0;
}
