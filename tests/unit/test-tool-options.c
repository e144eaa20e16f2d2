/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command line of pcie-telemetry: every option's value, the defaults,
 * and that bad arguments are refused with the usage code, never a crash;
 * and the sleep of watch mode, which must never miss a stop request.
 */
#include <glib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "options.h"
#include "wait.h"

static int parse(ptt_opts *o, char *msg, const char *line)
{
    g_auto(GStrv) words = NULL;
    g_autofree char *cmd = g_strconcat("pcie-telemetry ", line, NULL);
    int argc;
    int r;

    g_assert_true(g_shell_parse_argv(cmd, &argc, &words, NULL));
    r = ptt_parse_options(argc, words, o, msg, 256);
    if (r == 0) {
        /* pointers into argv must survive: copy what the tests read */
        o->device = o->device ? g_intern_string(o->device) : NULL;
        o->id_filter = o->id_filter ? g_intern_string(o->id_filter) : NULL;
        o->input = o->input ? g_intern_string(o->input) : NULL;
        o->listen = o->listen ? g_intern_string(o->listen) : NULL;
        for (unsigned i = 0; i < o->nadd_ids; i++) {
            o->add_ids[i] = g_intern_string(o->add_ids[i]);
        }
    }
    return r;
}

static void test_defaults(void)
{
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, ""), ==, 0);
    g_assert_null(o.device);
    g_assert_cmpuint(o.index, ==, 0);
    g_assert_cmpfloat(o.interval, ==, 1.0);
    g_assert_false(o.watch || o.clear || o.list || o.help || o.version);
    g_assert_cmpint(o.format, ==, PTT_TEXT);
    g_assert_cmpint(o.bar, ==, -1);
    g_assert_cmpint(o.offset, ==, -1);
    g_assert_cmpuint(o.nadd_ids, ==, 0);
}

static void test_values(void)
{
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, "-d 03:00.0 -i 2 -t 0.25 -w -j "
                          "-D 18ec: --add-id 8086:1234 --add-id 10ee:9038 "
                          "--bar 2 --offset 0x2000"), ==, 0);
    g_assert_cmpstr(o.device, ==, "03:00.0");
    g_assert_cmpuint(o.index, ==, 2);
    g_assert_cmpfloat(o.interval, ==, 0.25);
    g_assert_true(o.watch);
    g_assert_cmpint(o.format, ==, PTT_JSON);
    g_assert_cmpstr(o.id_filter, ==, "18ec:");
    g_assert_cmpuint(o.nadd_ids, ==, 2);
    g_assert_cmpstr(o.add_ids[1], ==, "10ee:9038");
    g_assert_null(o.add_ids[2]);
    g_assert_cmpint(o.bar, ==, 2);
    g_assert_cmpint(o.offset, ==, 0x2000);

    g_assert_cmpint(parse(&o, msg, "--device=/dev/nfb0 --index=1 "
                          "--interval=0 --csv"), ==, 0);
    g_assert_cmpstr(o.device, ==, "/dev/nfb0");
    g_assert_cmpfloat(o.interval, ==, 0);
    g_assert_cmpint(o.format, ==, PTT_CSV);

    g_assert_cmpint(parse(&o, msg, "--offset 65536"), ==, 0);
    g_assert_cmpint(o.offset, ==, 65536);
    g_assert_cmpint(o.bar, ==, -1);

    g_assert_cmpint(parse(&o, msg, "-c -d 0000:00:04.0"), ==, 0);
    g_assert_true(o.clear);
    g_assert_cmpint(parse(&o, msg, "-l"), ==, 0);
    g_assert_true(o.list);
    g_assert_cmpint(parse(&o, msg, "-h"), ==, 0);
    g_assert_true(o.help);
    g_assert_cmpint(parse(&o, msg, "--version"), ==, 0);
    g_assert_true(o.version);
}

/* --prometheus is a totals reading unless it repeats with -w. */
static void test_prometheus(void)
{
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, "--prometheus -t 5"), ==, 0);
    g_assert_cmpint(o.format, ==, PTT_PROMETHEUS);
    g_assert_cmpfloat(o.interval, ==, 0);
    g_assert_cmpint(parse(&o, msg, "--prometheus -w -t 5"), ==, 0);
    g_assert_cmpfloat(o.interval, ==, 5);
}

/* --listen and --live: what selects blocks goes with them, no measuring
 * or output option does; --live takes -t as its refresh interval. */
static void test_listen_live(void)
{
    static const char *const bad[] = {
        "--listen 9441 -w", "--listen 9441 -c", "--listen 9441 -l",
        "--listen 9441 -j", "--listen 9441 --prometheus",
        "--listen 9441 -t 5", "--listen 9441 --live", "--listen ''",
        "--listen", "--listen 9441 --input x.json",
        "--live -w", "--live -c", "--live --csv", "--live -t 0",
        "--live -l", "--live --input x.json",
    };
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, "--listen 0.0.0.0:9441 -d 01:00.0 -i 1 "
                          "-D 18ec:c000"), ==, 0);
    g_assert_cmpstr(o.listen, ==, "0.0.0.0:9441");
    g_assert_cmpstr(o.device, ==, "01:00.0");
    g_assert_true(o.index_given);
    g_assert_cmpint(parse(&o, msg, "--listen 9441 --offset 0x8000"), ==, 0);
    g_assert_cmpint(parse(&o, msg, "--live -t 0.5 -d 01:00.0"), ==, 0);
    g_assert_true(o.live);
    g_assert_cmpfloat(o.interval, ==, 0.5);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        msg[0] = '\0';
        if (parse(&o, msg, bad[i]) != 2) {
            g_error("'%s' was accepted", bad[i]);
        }
        g_assert_cmpuint(strlen(msg), >, 0);
    }
    g_assert_cmpint(parse(&o, msg, "--listen 9441 -w"), ==, 2);
    g_assert_cmpstr(msg, ==, "-w does not go with --listen");
}

/* --input reads no card: the options that select or measure one are
 * refused with it, the output formats go with it. */
static void test_input(void)
{
    static const char *const bad[] = {
        "-d 03:00.0", "-i 0", "-i 1", "-t 1", "-t 0", "-w", "-c",
        "--bar 0 --offset 0", "--offset 0x2000", "-l", "-D 18ec:",
        "--add-id 8086:1234",
    };
    static const struct {
        const char *args;
        ptt_format format;
    } good[] = {
        { "", PTT_TEXT }, { "-j", PTT_JSON }, { "--csv", PTT_CSV },
        { "--prometheus", PTT_PROMETHEUS },
    };
    ptt_opts o;
    char msg[256];

    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        g_autofree char *line = g_strdup_printf("--input saved.json %s",
                                                good[i].args);

        g_assert_cmpint(parse(&o, msg, line), ==, 0);
        g_assert_cmpstr(o.input, ==, "saved.json");
        g_assert_cmpint(o.format, ==, good[i].format);
    }
    g_assert_cmpint(parse(&o, msg, "--input=-"), ==, 0);
    g_assert_cmpstr(o.input, ==, "-");
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *line = g_strdup_printf("--input x.json %s", bad[i]);
        g_autofree char *rev = g_strdup_printf("%s --input x.json", bad[i]);

        msg[0] = '\0';
        if (parse(&o, msg, line) != 2 || parse(&o, msg, rev) != 2) {
            g_error("'%s' was accepted with --input", bad[i]);
        }
        g_assert_nonnull(strstr(msg, "does not go with --input"));
        g_assert_null(strchr(msg, '\n'));
    }
    g_assert_cmpint(parse(&o, msg, "--input ''"), ==, 2);
    g_assert_cmpint(parse(&o, msg, "--input"), ==, 2);
    g_assert_cmpint(parse(&o, msg, "--input a.json -j --csv"), ==, 2);
    g_assert_cmpint(parse(&o, msg, "--input a.json extra"), ==, 2);
}

static void test_refused(void)
{
    static const char *const bad[] = {
        "-t -1", "-t abc", "-t 1x", "-t nan", "-t inf", "-t ''", "-t 1e9",
        "-i -1", "-i 1.5", "-i x", "-i ''", "-i 99999999999",
        "--bar 6", "--bar -1", "--bar 0x1 --offset 0", "--bar 1",
        "--offset -5", "--offset 0x", "--offset zz",
        "-t", "-d", "--offset", "--bogus", "-x", "extra",
        "-j --csv", "--csv --prometheus", "-l -c", "-l -w", "-c -w",
        "-w -t 0", "-d ''",
    };
    ptt_opts o;
    char msg[256];

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        msg[0] = '\0';
        if (parse(&o, msg, bad[i]) != 2) {
            g_error("'%s' was accepted", bad[i]);
        }
        g_assert_cmpuint(strlen(msg), >, 0);
        g_assert_null(strchr(msg, '\n'));
    }
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
    stop_flag = 1;
}

static void catch_stops(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    g_assert_cmpint(sigaction(SIGINT, &sa, NULL), ==, 0);
    g_assert_cmpint(sigaction(SIGTERM, &sa, NULL), ==, 0);
    stop_flag = 0;
}

/* Without a signal the sleep lasts until the deadline, not longer. */
static void test_port(void)
{
    static const struct {
        const char *line, *msg;
    } refused[] = {
        { "--port up", "--port: 'up' is not rx, tx or both" },
        { "--port", "--port needs an argument" },
        { "--port rx -c", "--port does not go with --clear" },
        { "--port rx --csv", "--port goes with the text report and --json "
          "only" },
        { "--port rx --prometheus -w", "--port goes with the text report "
          "and --json only" },
        { "--port tx -t 0", "--port needs an interval above 0 (the port "
          "counts only over the tool's intervals)" },
        { "--port both --list", "--list goes with no measuring or output "
          "option" },
        { "--port rx --live", "--port does not go with --live" },
        { "--port rx --listen 9441", "--port does not go with --listen" },
        { "--input x.json --port rx", "--port does not go with --input "
          "(which reads no card)" },
    };
    ptt_opts o;
    char msg[256];

    g_assert_cmpint(parse(&o, msg, ""), ==, 0);
    g_assert_cmpint(o.port, ==, PTT_PORT_NONE);
    g_assert_cmpint(parse(&o, msg, "--port rx"), ==, 0);
    g_assert_cmpint(o.port, ==, PTT_PORT_RX);
    g_assert_cmpint(parse(&o, msg, "--port=tx -w -t 0.5 -j"), ==, 0);
    g_assert_cmpint(o.port, ==, PTT_PORT_TX);
    g_assert_true(o.watch);
    g_assert_cmpint(o.format, ==, PTT_JSON);
    g_assert_cmpint(parse(&o, msg, "-d 01:00.0 --port both"), ==, 0);
    g_assert_cmpint(o.port, ==, PTT_PORT_BOTH);
    for (unsigned i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_assert_cmpint(parse(&o, msg, refused[i].line), ==, 2);
        g_assert_cmpstr(msg, ==, refused[i].msg);
    }
}

static void test_sleep_deadline(void)
{
    uint64_t t0, t1;

    catch_stops();
    t0 = ptt_mono_ns();
    g_assert_true(ptt_sleep_until(t0 + 30000000, &stop_flag));
    t1 = ptt_mono_ns();
    g_assert_cmpuint(t1 - t0, >=, 30000000);
    g_assert_cmpuint(t1 - t0, <, 2000000000);
    /* a deadline in the past: no sleep at all */
    g_assert_true(ptt_sleep_until(t0, &stop_flag));
}

/*
 * A signal that arrives after the caller looked at the flag and before
 * the sleep starts (here: one that is pending when the sleep is called)
 * ends the sleep at once instead of after the whole interval.
 */
static void test_sleep_pending_stop(void)
{
    sigset_t term, now;
    uint64_t t0;

    catch_stops();
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    g_assert_cmpint(sigprocmask(SIG_BLOCK, &term, NULL), ==, 0);
    g_assert_cmpint(raise(SIGTERM), ==, 0);
    g_assert_cmpint(stop_flag, ==, 0);
    t0 = ptt_mono_ns();
    g_assert_false(ptt_sleep_until(t0 + 10000000000ull, &stop_flag));
    /* ended by the signal, not by the deadline */
    g_assert_cmpuint(ptt_mono_ns() - t0, <, 10000000000ull);
    g_assert_cmpint(stop_flag, ==, 1);
    /* the caller's mask is back */
    g_assert_cmpint(sigprocmask(SIG_BLOCK, NULL, &now), ==, 0);
    g_assert_true(sigismember(&now, SIGTERM));
    g_assert_cmpint(sigprocmask(SIG_UNBLOCK, &term, NULL), ==, 0);
    /* a flag already set: no sleep */
    g_assert_false(ptt_sleep_until(ptt_mono_ns() + 10000000000ull,
                                   &stop_flag));
}

static gpointer send_int(gpointer target)
{
    g_usleep(50000);
    pthread_kill(*(pthread_t *)target, SIGINT);
    return NULL;
}

/* SIGINT during the sleep ends it. */
static void test_sleep_interrupted(void)
{
    pthread_t self = pthread_self();
    GThread *th;
    uint64_t t0;

    catch_stops();
    t0 = ptt_mono_ns();
    th = g_thread_new("sigint", send_int, &self);
    g_assert_false(ptt_sleep_until(t0 + 10000000000ull, &stop_flag));
    /* ended by the signal, not by the deadline */
    g_assert_cmpuint(ptt_mono_ns() - t0, <, 10000000000ull);
    g_thread_join(th);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl-options/defaults", test_defaults);
    g_test_add_func("/ptl-options/values", test_values);
    g_test_add_func("/ptl-options/prometheus", test_prometheus);
    g_test_add_func("/ptl-options/refused", test_refused);
    g_test_add_func("/ptl-options/input", test_input);
    g_test_add_func("/ptl-options/listen-live", test_listen_live);
    g_test_add_func("/ptl-options/port", test_port);
    g_test_add_func("/ptl-tool/sleep/deadline", test_sleep_deadline);
    g_test_add_func("/ptl-tool/sleep/pending-stop", test_sleep_pending_stop);
    g_test_add_func("/ptl-tool/sleep/interrupted", test_sleep_interrupted);
    return g_test_run();
}
