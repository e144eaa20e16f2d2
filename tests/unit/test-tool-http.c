/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter's HTTP server on 127.0.0.1, served by a thread of its own:
 * good requests, every refusal and its status, the limits (request size,
 * connections, time), clients that go away, and the --listen argument.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

#define METRICS "# TYPE up gauge\nup 1\n"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define ROOT "<html><body><a href=\"/metrics\">metrics</a></body></html>\n"
#define BIG (1 << 20)

typedef struct test_server {
    ptt_http *http;
    pthread_t thread;
    volatile sig_atomic_t stop;
    int calls;                  /* of the handler */
} test_server;

static void handler(void *opaque, const char *path, ptt_http_response *resp)
{
    test_server *ts = opaque;

    g_atomic_int_inc(&ts->calls);
    resp->status = 200;
    if (!strcmp(path, "/metrics")) {
        resp->body = g_strdup(METRICS);
        resp->content_type = METRICS_TYPE;
    } else if (!strcmp(path, "/")) {
        resp->body = g_strdup(ROOT);
        resp->content_type = "text/html; charset=utf-8";
    } else if (!strcmp(path, "/big")) {
        resp->body = g_malloc(BIG);
        memset(resp->body, 'x', BIG);
        resp->len = BIG;
        return;
    } else if (!strcmp(path, "/gone")) {
        resp->status = 404;     /* no body: the server writes one */
        return;
    } else {
        resp->status = 404;
        resp->body = g_strdup_printf("not found: %s\n", path);
    }
    resp->len = strlen(resp->body);
}

/* the server in slices of 50 ms, so that ->stop ends it soon */
static void *serve(void *opaque)
{
    test_server *ts = opaque;

    while (!ts->stop) {
        g_assert_cmpint(ptt_http_serve(ts->http, handler, ts, &ts->stop, 50),
                        ==, 0);
    }
    return NULL;
}

static test_server *start_limits(const ptt_http_limits *limits)
{
    test_server *ts = g_new0(test_server, 1);
    char msg[256];
    bool usage;

    ts->http = ptt_http_new("127.0.0.1:0", limits, msg, sizeof(msg), &usage);
    g_assert_nonnull(ts->http);
    g_assert_cmpint(pthread_create(&ts->thread, NULL, serve, ts), ==, 0);
    return ts;
}

static test_server *start(void)
{
    return start_limits(NULL);
}

static void stop(test_server *ts)
{
    ts->stop = 1;
    g_assert_cmpint(pthread_join(ts->thread, NULL), ==, 0);
    ptt_http_free(ts->http);
    g_free(ts);
}

static int dial(test_server *ts)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET,
        .sin_port = htons(ptt_http_port(ts->http)),
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
    };
    struct timeval safety = { 20, 0 };  /* a hung server fails, not hangs */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_cmpint(fd, >=, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &safety, sizeof(safety));
    g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

        g_assert_cmpint(n, >, 0);
        data += n;
        len -= (size_t)n;
    }
}

/* everything up to the server's EOF, which must come */
static GString *read_all(int fd)
{
    GString *in = g_string_new(NULL);
    char buf[65536];
    ssize_t n;

    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
        g_string_append_len(in, buf, n);
    }
    if (n < 0) {
        g_error("recv: %s", g_strerror(errno));
    }
    close(fd);
    return in;
}

typedef struct reply {
    int status;
    char *head;                 /* status line and headers */
    char *body;
    size_t len;
} reply;

static char *header(const reply *r, const char *name)
{
    g_autofree char *key = g_strdup_printf("\r\n%s: ", name);
    const char *p = strstr(r->head, key);

    return p ? g_strndup(p + strlen(key), strcspn(p + strlen(key), "\r"))
             : NULL;
}

/* checks what every response has: Content-Length, Connection: close */
static reply *parse_reply(GString *raw)
{
    reply *r = g_new0(reply, 1);
    char *end = g_strstr_len(raw->str, raw->len, "\r\n\r\n");
    g_autofree char *len = NULL, *conn = NULL;

    g_assert_nonnull(end);
    r->head = g_strndup(raw->str, end + 2 - raw->str);
    r->len = raw->len - (size_t)(end + 4 - raw->str);
    r->body = g_strndup(end + 4, r->len);
    g_assert_true(g_str_has_prefix(r->head, "HTTP/1.1 "));
    r->status = atoi(r->head + 9);
    len = header(r, "Content-Length");
    conn = header(r, "Connection");
    g_assert_cmpuint(g_ascii_strtoull(len, NULL, 10), ==, r->len);
    g_assert_cmpstr(conn, ==, "close");
    g_string_free(raw, true);
    return r;
}

static void reply_free(reply *r)
{
    g_free(r->head);
    g_free(r->body);
    g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(reply, reply_free)

static reply *request_len(test_server *ts, const char *req, size_t len)
{
    int fd = dial(ts);

    send_all(fd, req, len);
    return parse_reply(read_all(fd));
}

static reply *request(test_server *ts, const char *req)
{
    return request_len(ts, req, strlen(req));
}

/* an error response: its status, and a short text that names it */
static void expect_error(test_server *ts, const char *req, size_t len,
                         int status)
{
    g_autoptr(reply) r = request_len(ts, req, len);
    g_autofree char *type = header(r, "Content-Type");
    int calls = g_atomic_int_get(&ts->calls);

    if (r->status != status) {
        g_autofree char *esc = g_strescape(req, NULL);

        g_test_message("request '%s'", esc);
    }
    g_assert_cmpint(r->status, ==, status);
    g_assert_cmpstr(type, ==, "text/plain; charset=utf-8");
    g_assert_cmpuint(r->len, >, 0);
    g_assert_cmpint(atoi(r->body), ==, status);
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, calls);
}

static void test_get(void)
{
    test_server *ts = start();
    g_autoptr(reply) m = request(ts, "GET /metrics HTTP/1.1\r\n"
                                 "Host: localhost\r\nAccept: */*\r\n\r\n");
    g_autoptr(reply) root = request(ts, "GET / HTTP/1.0\r\n\r\n");
    g_autofree char *mtype = header(m, "Content-Type");
    g_autofree char *rtype = header(root, "Content-Type");

    g_assert_true(g_str_has_prefix(m->head, "HTTP/1.1 200 OK\r\n"));
    g_assert_cmpstr(mtype, ==, METRICS_TYPE);
    g_assert_cmpstr(m->body, ==, METRICS);
    g_assert_cmpint(root->status, ==, 200);
    g_assert_cmpstr(rtype, ==, "text/html; charset=utf-8");
    g_assert_cmpstr(root->body, ==, ROOT);
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 2);
    stop(ts);
}

static void test_query_and_404(void)
{
    test_server *ts = start();
    g_autoptr(reply) m = request(ts, "GET /metrics?x=1 HTTP/1.1\r\n\r\n");
    g_autoptr(reply) root = request(ts, "GET /?a=b&c HTTP/1.1\r\n\r\n");
    g_autoptr(reply) nf = request(ts, "GET /nope?x HTTP/1.1\r\n\r\n");
    g_autoptr(reply) sub = request(ts, "GET /metrics/ HTTP/1.1\r\n\r\n");
    g_autoptr(reply) gone = request(ts, "GET /gone HTTP/1.1\r\n\r\n");

    g_assert_cmpint(m->status, ==, 200);
    g_assert_cmpstr(m->body, ==, METRICS);
    g_assert_cmpstr(root->body, ==, ROOT);
    g_assert_true(g_str_has_prefix(nf->head, "HTTP/1.1 404 Not Found\r\n"));
    g_assert_cmpstr(nf->body, ==, "not found: /nope\n");
    g_assert_cmpint(sub->status, ==, 404);
    g_assert_cmpint(gone->status, ==, 404);
    g_assert_cmpuint(gone->len, >, 0);
    stop(ts);
}

static void test_big(void)
{
    test_server *ts = start();
    g_autoptr(reply) r = request(ts, "GET /big HTTP/1.1\r\n\r\n");

    g_assert_cmpint(r->status, ==, 200);
    g_assert_cmpuint(r->len, ==, BIG);
    g_assert_cmpuint(strspn(r->body, "x"), ==, BIG);
    stop(ts);
}

static void test_methods(void)
{
    static const char *const methods[] = {
        "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT",
        "TRACE", "FOO", "get", "GETS",
    };
    test_server *ts = start();
    static const char post[] = "POST /metrics HTTP/1.1\r\n"
                               "Content-Length: 3\r\n\r\nabc";

    for (size_t i = 0; i < G_N_ELEMENTS(methods); i++) {
        g_autofree char *req = g_strdup_printf("%s /metrics HTTP/1.1\r\n"
                                               "Host: x\r\n\r\n", methods[i]);
        g_autoptr(reply) r = request(ts, req);
        g_autofree char *allow = header(r, "Allow");

        g_assert_true(g_str_has_prefix(r->head,
                                       "HTTP/1.1 405 Method Not Allowed\r\n"));
        g_assert_cmpstr(allow, ==, "GET");
        g_assert_cmpint(atoi(r->body), ==, 405);
    }
    expect_error(ts, post, strlen(post), 405);
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 0);
    stop(ts);
}

static void test_version(void)
{
    static const char *const versions[] = {
        "HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/9.9",
    };
    test_server *ts = start();
    g_autoptr(reply) r = NULL;

    for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
        g_autofree char *req = g_strdup_printf("GET /metrics %s\r\n\r\n",
                                               versions[i]);

        expect_error(ts, req, strlen(req), 505);
    }
    r = request(ts, "GET /metrics HTTP/1.0\r\n\r\n");
    g_assert_cmpint(r->status, ==, 200);
    /* a later HTTP/1 minor version is served as 1.1 */
    g_clear_pointer(&r, reply_free);
    r = request(ts, "GET /metrics HTTP/1.2\r\n\r\n");
    g_assert_cmpint(r->status, ==, 200);
    stop(ts);
}

static void test_bad_request_line(void)
{
    static const char *const lines[] = {
        "GET", "GET /", "GET / ", "GET  / HTTP/1.1", "GET /  HTTP/1.1",
        " GET / HTTP/1.1", "GET / HTTP/1.1 ", "GET /\tx HTTP/1.1",
        "GET\t/ HTTP/1.1", "GET / HTTP/1.10", "GET / HTTP/11",
        "GET / http/1.1", "GET / HTTP/1.x", "GET / HTTP/2", "GET / HTTP/",
        "GET http://localhost/metrics HTTP/1.1", "GET * HTTP/1.1",
        "GET metrics HTTP/1.1", "GET /\x7f HTTP/1.1",
        "GET /\xc3\xa9 HTTP/1.1", "G(T / HTTP/1.1", "GET /a b HTTP/1.1",
        "", "\x16\x03\x01\x02",
    };
    static const char nul[] = "GET /\0 HTTP/1.1\r\n\r\n";
    test_server *ts = start();

    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        g_autofree char *req = g_strdup_printf("%s\r\nHost: x\r\n\r\n",
                                               lines[i]);

        expect_error(ts, req, strlen(req), 400);
    }
    expect_error(ts, nul, sizeof(nul) - 1, 400);
    stop(ts);
}

static void test_headers(void)
{
    static const char *const bad[] = {
        "Host", "Host : x", "Host\t: x", " Host: x", "\tHost: x", ": x",
        "Ho st: x", "Ho(st: x", "Host: a\x01z", "Host: a\x7f",
        "X-A: 1\r\n continued", "Content-Length: abc",
        "Content-Length: -1", "Content-Length: 0 0", "Content-Length:",
    };
    static const char *const good[] = {
        "Host:x", "X-Empty:", "X-Tab:\tv\t", "X-Obs: \xc3\xa9",
        "X-!#$%&'*+-.^_`|~: v", "Content-Length: 0",
        "content-length:  00 ", "Expect: 100-continue",
    };
    static const char nul[] = "GET / HTTP/1.1\r\nHost: a\0z\r\n\r\n";
    test_server *ts = start();

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *req = g_strdup_printf("GET /metrics HTTP/1.1\r\n"
                                               "%s\r\n\r\n", bad[i]);

        expect_error(ts, req, strlen(req), 400);
    }
    expect_error(ts, nul, sizeof(nul) - 1, 400);
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        g_autofree char *req = g_strdup_printf("GET /metrics HTTP/1.1\r\n"
                                               "%s\r\n\r\n", good[i]);
        g_autoptr(reply) r = request(ts, req);

        g_assert_cmpint(r->status, ==, 200);
        g_assert_cmpstr(r->body, ==, METRICS);
    }
    stop(ts);
}

/* answered at once: a request without CRLFs never reaches its end */
static void test_line_ends(void)
{
    static const char *const reqs[] = {
        "GET / HTTP/1.1\n\n", "GET / HTTP/1.1\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\n\r\n", "GET / HTTP/1.1\r\nHost: x\n",
        "GET / HTTP/1.1\rHost: x\r\n\r\n", "GET / HTTP/1.1\r\n\r\r\n",
        "\n", "GET / HTTP/1.1\r\r\n\r\n",
    };
    test_server *ts = start();

    for (size_t i = 0; i < G_N_ELEMENTS(reqs); i++) {
        expect_error(ts, reqs[i], strlen(reqs[i]), 400);
    }
    stop(ts);
}

static void test_body(void)
{
    static const char *const reqs[] = {
        "GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
        "GET /metrics HTTP/1.1\r\ncontent-length: 1\r\n\r\nx",
        "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "0\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n"
        "Content-Length: 010\r\n\r\n0123456789",
    };
    test_server *ts = start();

    for (size_t i = 0; i < G_N_ELEMENTS(reqs); i++) {
        expect_error(ts, reqs[i], strlen(reqs[i]), 400);
    }
    stop(ts);
}

/* "GET /metrics HTTP/1.1\r\nX-Pad: aaa...\r\n\r\n", len bytes in all */
static char *padded(size_t len)
{
    static const char head[] = "GET /metrics HTTP/1.1\r\nX-Pad: ";
    char *req = g_malloc(len + 1);

    g_assert_cmpuint(len, >, sizeof(head) + 4);
    memcpy(req, head, sizeof(head) - 1);
    memset(req + sizeof(head) - 1, 'a', len - (sizeof(head) - 1) - 4);
    memcpy(req + len - 4, "\r\n\r\n", 5);
    return req;
}

static void test_too_large(void)
{
    test_server *ts = start();
    g_autofree char *fits = padded(8192);
    g_autofree char *over = padded(8193);
    g_autofree char *line = g_strnfill(9000, 'a');
    g_autofree char *long_line = g_strdup_printf("GET /%s HTTP/1.1\r\n\r\n",
                                                 line);
    g_autofree char *endless = g_strnfill(4 << 20, 'a');
    GString *many = g_string_new("GET /metrics HTTP/1.1\r\n");
    g_autoptr(reply) r = request(ts, fits);
    g_autoptr(reply) after = NULL;

    g_assert_cmpint(r->status, ==, 200);
    expect_error(ts, over, strlen(over), 431);
    expect_error(ts, long_line, strlen(long_line), 431);
    for (int i = 0; i < 200; i++) {
        g_string_append_printf(many, "X-Header-%03d: %050d\r\n", i, i);
    }
    g_string_append(many, "\r\n");
    expect_error(ts, many->str, many->len, 431);
    /* no line end at all; the server reads the rest away before closing */
    expect_error(ts, endless, strlen(endless), 431);
    after = request(ts, "GET /metrics HTTP/1.1\r\n\r\n");
    g_assert_cmpint(after->status, ==, 200);
    g_string_free(many, true);
    stop(ts);
}

static void test_pipelined(void)
{
    test_server *ts = start();
    g_autoptr(reply) r = request(ts, "GET /metrics HTTP/1.1\r\n\r\n"
                                 "GET / HTTP/1.1\r\n\r\n"
                                 "GET /nope HTTP/1.1\r\n\r\n");

    /* parse_reply checked that the body is all there is after the head */
    g_assert_cmpint(r->status, ==, 200);
    g_assert_cmpstr(r->body, ==, METRICS);
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 1);
    stop(ts);
}

static void test_slow_client(void)
{
    ptt_http_limits limits = { 8192, 4, 300 };
    test_server *ts = start_limits(&limits);
    static const char part[] = "GET /metrics HTTP/1.1\r\nHost: loc";
    int half = dial(ts), idle = dial(ts), trickle = dial(ts);
    g_autoptr(reply) r = NULL, r_half = NULL, r_idle = NULL;
    struct pollfd pfd = { .fd = trickle, .events = POLLIN };
    int sent = 0;

    send_all(half, part, strlen(part));
    r_half = parse_reply(read_all(half));
    r_idle = parse_reply(read_all(idle));
    g_assert_cmpint(r_half->status, ==, 408);
    g_assert_cmpint(r_idle->status, ==, 408);
    /* busy, never done: the limit is on the whole exchange */
    while (poll(&pfd, 1, 20) == 0) {
        send_all(trickle, &part[sent++ % (sizeof(part) - 1)], 1);
    }
    r = parse_reply(read_all(trickle));
    g_assert_cmpint(r->status, ==, 408);
    g_assert_true(g_str_has_prefix(r->head,
                                   "HTTP/1.1 408 Request Timeout\r\n"));
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 0);
    reply_free(request(ts, "GET /metrics HTTP/1.1\r\n\r\n"));
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 1);
    stop(ts);
}

static void test_busy(void)
{
    ptt_http_limits limits = { 8192, 4, 30000 };
    test_server *ts = start_limits(&limits);
    static const char get[] = "GET /metrics HTTP/1.1\r\n\r\n";
    int idle[4];
    reply *r;

    for (int i = 0; i < 4; i++) {
        idle[i] = dial(ts);
    }
    /* accepted after the four: no slot left, answered at once */
    expect_error(ts, get, strlen(get), 503);
    for (int i = 0; i < 4; i++) {
        send_all(idle[i], get, strlen(get));
        r = parse_reply(read_all(idle[i]));
        g_assert_cmpint(r->status, ==, 200);
        g_assert_cmpstr(r->body, ==, METRICS);
        reply_free(r);
    }
    r = request(ts, get);
    g_assert_cmpint(r->status, ==, 200);
    reply_free(r);
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 5);
    stop(ts);
}

/* without MSG_NOSIGNAL, SIGPIPE would end this test */
static void test_client_gone(void)
{
    test_server *ts = start();
    static const char big[] = "GET /big HTTP/1.1\r\n\r\n";
    g_autoptr(reply) r = NULL;
    char some[1000];

    for (int i = 0; i < 24; i++) {
        int fd = dial(ts);
        struct linger reset = { 1, 0 };

        send_all(fd, big, strlen(big));
        if (i % 3 == 1) {
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        } else if (i % 3 == 2) {
            g_assert_cmpint(recv(fd, some, sizeof(some), MSG_WAITALL), ==,
                            sizeof(some));
        }
        close(fd);
    }
    r = request(ts, big);
    g_assert_cmpint(r->status, ==, 200);
    g_assert_cmpuint(r->len, ==, BIG);
    stop(ts);
}

static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
    signalled = sig;
}

static void *serve_until_signal(void *opaque)
{
    test_server *ts = opaque;

    return GINT_TO_POINTER(ptt_http_serve(ts->http, handler, ts, &signalled,
                                          -1));
}

/* no time limit: only the signal ends the loop */
static void test_signal(void)
{
    test_server *ts = g_new0(test_server, 1);
    struct sigaction sa = { .sa_handler = on_signal }, old;
    char msg[256];
    bool usage;
    void *ret;

    g_assert_cmpint(sigaction(SIGTERM, &sa, &old), ==, 0);
    ts->http = ptt_http_new("0", NULL, msg, sizeof(msg), &usage);
    g_assert_nonnull(ts->http);
    g_assert_cmpint(pthread_create(&ts->thread, NULL, serve_until_signal,
                                   ts), ==, 0);
    reply_free(request(ts, "GET /metrics HTTP/1.1\r\n\r\n"));
    g_assert_cmpint(g_atomic_int_get(&ts->calls), ==, 1);
    pthread_kill(ts->thread, SIGTERM);
    g_assert_cmpint(pthread_join(ts->thread, &ret), ==, 0);
    g_assert_cmpint(GPOINTER_TO_INT(ret), ==, 0);
    g_assert_cmpint(signalled, ==, SIGTERM);
    sigaction(SIGTERM, &old, NULL);
    ptt_http_free(ts->http);
    g_free(ts);
}

static bool has_ipv6_loopback(void)
{
    struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok;

    a.sin6_addr = in6addr_loopback;
    ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

/* *usage must be set on success too */
static ptt_http *listen_on(const char *arg, char *msg, bool *usage)
{
    ptt_http *s;

    *usage = true;
    s = ptt_http_new(arg, NULL, msg, 256, usage);
    g_assert_true(!s || !*usage);
    return s;
}

static void test_address(void)
{
    static const char *const malformed[] = {
        "", ":", "x", "80x", "-1", "+80", " 80", "80 ", "0x50", "127.0.0.1:",
        ":80", "127.0.0.1:80:", "::1:80", "::1", "[::1]", "[::1]80",
        "[::1:80", "[]:80", "[1.2.3.4]:80", "[::1]:", "[::1]]:80",
        "[::1%lo]:80", "999.1.1.1:80", "1.2.3:80", "host name:80",
        "a_b:80", "a/b:80", "localhost:http", "localhost: 80",
    };
    static const char *const range[] = {
        "65536", "70000", "127.0.0.1:99999", "[::1]:123456789012345678901",
    };
    char msg[256], *expect;
    bool usage = false;
    ptt_http *s = listen_on("0", msg, &usage), *t;

    g_assert_nonnull(s);
    g_assert_cmpuint(ptt_http_port(s), >, 0);
    expect = g_strdup_printf("127.0.0.1:%u", ptt_http_port(s));
    g_assert_cmpstr(ptt_http_address(s), ==, expect);
    g_free(expect);

    /* in use */
    expect = g_strdup_printf("127.0.0.1:%u", ptt_http_port(s));
    g_assert_null(listen_on(expect, msg, &usage));
    g_assert_false(usage);
    g_assert_true(g_str_has_prefix(msg, "--listen 127.0.0.1:"));
    g_assert_nonnull(strstr(msg, ": cannot bind: "));
    g_assert_nonnull(strstr(msg, g_strerror(EADDRINUSE)));
    g_free(expect);
    ptt_http_free(s);

    /* not an address of this machine (TEST-NET-1) */
    g_assert_null(listen_on("192.0.2.1:0", msg, &usage));
    g_assert_false(usage);
    g_assert_cmpstr(msg, ==, "--listen 192.0.2.1:0: cannot bind: Cannot "
                    "assign requested address");

    s = listen_on("127.0.0.1:0", msg, &usage);
    g_assert_nonnull(s);
    g_assert_false(usage);
    ptt_http_free(s);
    s = listen_on("localhost:0", msg, &usage);
    g_assert_nonnull(s);
    g_assert_true(g_str_has_prefix(ptt_http_address(s), "127.0.0.1:")
                  || g_str_has_prefix(ptt_http_address(s), "[::1]:"));
    ptt_http_free(s);
    if (has_ipv6_loopback()) {
        s = listen_on("[::1]:0", msg, &usage);
        g_assert_nonnull(s);
        expect = g_strdup_printf("[::1]:%u", ptt_http_port(s));
        g_assert_cmpstr(ptt_http_address(s), ==, expect);
        g_free(expect);
        ptt_http_free(s);
    } else {
        g_test_message("no IPv6 loopback: [::1] not tried");
    }
    /* the largest port is no usage error, whether it is free or not */
    t = listen_on("127.0.0.1:65535", msg, &usage);
    g_assert_true(t || !usage);
    ptt_http_free(t);

    for (size_t i = 0; i < G_N_ELEMENTS(malformed); i++) {
        expect = g_strdup_printf("--listen: '%s' is not [ADDR:]PORT",
                                 malformed[i]);
        g_assert_null(listen_on(malformed[i], msg, &usage));
        g_assert_true(usage);
        g_assert_cmpstr(msg, ==, expect);
        g_free(expect);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(range); i++) {
        expect = g_strdup_printf("--listen: '%s': PORT is not in 0..65535",
                                 range[i]);
        g_assert_null(listen_on(range[i], msg, &usage));
        g_assert_true(usage);
        g_assert_cmpstr(msg, ==, expect);
        g_free(expect);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptt-http/get", test_get);
    g_test_add_func("/ptt-http/query-and-404", test_query_and_404);
    g_test_add_func("/ptt-http/big", test_big);
    g_test_add_func("/ptt-http/methods", test_methods);
    g_test_add_func("/ptt-http/version", test_version);
    g_test_add_func("/ptt-http/bad-request-line", test_bad_request_line);
    g_test_add_func("/ptt-http/headers", test_headers);
    g_test_add_func("/ptt-http/line-ends", test_line_ends);
    g_test_add_func("/ptt-http/body", test_body);
    g_test_add_func("/ptt-http/too-large", test_too_large);
    g_test_add_func("/ptt-http/pipelined", test_pipelined);
    g_test_add_func("/ptt-http/slow-client", test_slow_client);
    g_test_add_func("/ptt-http/busy", test_busy);
    g_test_add_func("/ptt-http/client-gone", test_client_gone);
    g_test_add_func("/ptt-http/signal", test_signal);
    g_test_add_func("/ptt-http/address", test_address);
    return g_test_run();
}
