/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command line of pcie-telemetry: the reference reader's options with the
 * same meaning, plus the ways to reach cards it does not know.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
    OPT_CSV = 0x100,
    OPT_PROMETHEUS,
    OPT_ADD_ID,
    OPT_BAR,
    OPT_OFFSET,
    OPT_INPUT,
    OPT_LISTEN,
    OPT_LIVE,
    OPT_PORT,
    OPT_FLIT,
    OPT_FLIT_INSTANCES,
    OPT_PTT,
    OPT_PTT_FORMAT,
    OPT_PTT_RAW,
    OPT_PTT_INPUT,
    OPT_PG381,
};

static const struct option long_opts[] = {
    { "device", required_argument, NULL, 'd' },
    { "index", required_argument, NULL, 'i' },
    { "interval", required_argument, NULL, 't' },
    { "watch", no_argument, NULL, 'w' },
    { "clear", no_argument, NULL, 'c' },
    { "json", no_argument, NULL, 'j' },
    { "csv", no_argument, NULL, OPT_CSV },
    { "prometheus", no_argument, NULL, OPT_PROMETHEUS },
    { "id", required_argument, NULL, 'D' },
    { "add-id", required_argument, NULL, OPT_ADD_ID },
    { "bar", required_argument, NULL, OPT_BAR },
    { "offset", required_argument, NULL, OPT_OFFSET },
    { "list", no_argument, NULL, 'l' },
    { "input", required_argument, NULL, OPT_INPUT },
    { "listen", required_argument, NULL, OPT_LISTEN },
    { "live", no_argument, NULL, OPT_LIVE },
    { "port", required_argument, NULL, OPT_PORT },
    { "flit", no_argument, NULL, OPT_FLIT },
    { "flit-instances", required_argument, NULL, OPT_FLIT_INSTANCES },
    { "ptt", required_argument, NULL, OPT_PTT },
    { "ptt-format", required_argument, NULL, OPT_PTT_FORMAT },
    { "ptt-raw", required_argument, NULL, OPT_PTT_RAW },
    { "ptt-input", required_argument, NULL, OPT_PTT_INPUT },
    { "pg381", no_argument, NULL, OPT_PG381 },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

void ptt_print_help(FILE *f)
{
    fputs(
"Usage: pcie-telemetry [OPTION]...\n"
"Read the PCIE_TELEMETRY_MI block of a CESNET NDK card and report the PCIe\n"
"and DMA traffic of one interval (by default one second).\n"
"\n"
"Selecting the card and the block:\n"
"  -d, --device DEV      the card: a PCI address as lspci -s takes it\n"
"                        ([[domain:]bus:]slot[.func]), a sysfs device path\n"
"                        (/sys/bus/pci/devices/0000:01:00.0) or /dev/nfbN;\n"
"                        default: the first card with a telemetry block\n"
"  -i, --index N         the N-th telemetry block in the card's device tree\n"
"                        (default 0)\n"
"  -D, --id VEN:DEV      only functions with this vendor:device (hex, lspci -d\n"
"                        syntax; either part may be empty); such functions are\n"
"                        taken whatever their vendor\n"
"      --add-id VEN:DEV  also take this vendor:device besides the NDK vendors\n"
"                        (CESNET 18ec, Netcope 1b26, ReflexCES 1bad, Silicom\n"
"                        1c2c) and the virtual card 1234:0d7b; repeatable\n"
"      --bar N           BAR of the block (0-5), for a card without a device\n"
"                        tree; needs --offset\n"
"      --offset X        offset of the block in the BAR (decimal or 0x hex);\n"
"                        alone it means BAR 0\n"
"  -l, --list            list the cards and telemetry blocks found (and the\n"
"                        DesignWare PMU above each, and the flit mode of each\n"
"                        and of the ports above it), then exit\n"
"\n"
"Measuring:\n"
"  -t, --interval SEC    length of the measured interval (default 1.0); 0\n"
"                        prints the totals since the last clear\n"
"  -w, --watch           keep measuring and printing until interrupted\n"
"  -c, --clear           zero all counters and exit\n"
"      --port WHICH      also count the TLP payload the root port above the\n"
"                        card sees, with the perf PMU of a DesignWare port\n"
"                        (dwc_pcie_pmu), and show both ends of the link: rx\n"
"                        (card -> port) or tx (port -> card) over each\n"
"                        interval, or both: rx over the first half of each\n"
"                        interval and tx over the second (the port has one\n"
"                        such counter); text and JSON only\n"
"      --flit            instead of the block's report, the PCIe 6 flit mode\n"
"                        of the card's link and of every port above it with\n"
"                        the flit capabilities (0x0031-0x0033): flit mode,\n"
"                        64 GT/s equalization, the flit error log and\n"
"                        counter, over each interval the flits received\n"
"                        (FBER measurement), invalid flits, correctable\n"
"                        errors per lane, the Flit->Ack latency and the LTSSM\n"
"                        trackers; text or JSON. It enables FBER and latency\n"
"                        measurement where they are off and turns them off\n"
"                        again at the end\n"
"      --flit-instances N  Flit->Ack latencies summed per interval, 1 to 31\n"
"                        (default 31; 0: the worst case instead)\n"
"      --ptt DIR         instead of the block's report, trace the TLP headers\n"
"                        of the card with the HiSilicon PTT that covers it\n"
"                        (hisi_ptt perf PMU, AUX area) over the interval and\n"
"                        report TLPs and payload bytes by kind and requester:\n"
"                        DIR in (into the root port) or out (out of it);\n"
"                        text or JSON\n"
"      --ptt-format F    the trace's records: 4dw (default) or 8dw\n"
"      --ptt-raw FILE    also write the trace's raw records (the AUX data)\n"
"                        to FILE\n"
"      --ptt-input FILE  report the raw records saved in FILE, or the\n"
"                        trace in a perf.data that perf record wrote,\n"
"                        instead of tracing (with --ptt DIR; the format is\n"
"                        guessed from the first record unless --ptt-format)\n"
"      --pg381           instead of the block's report, the counters of the\n"
"                        card's PG381 traffic generator (the node compatible\n"
"                        with xlnx,perf-axi-tg-1.0 in its device tree, or\n"
"                        --bar/--offset) read at one instant (CAPTURE_ALL):\n"
"                        requests, beats, lasts, bandwidth, latencies and\n"
"                        done/error; text or JSON\n"
"\n"
"Output (default: the report as a table):\n"
"  -j, --json            the reference reader's JSON\n"
"      --csv             one row per bus and interval, after one header line\n"
"      --prometheus      raw counters in the Prometheus text format (totals;\n"
"                        with -w repeated every interval)\n"
"      --live            one screen redrawn in place every interval, like\n"
"                        top: a bar per bus and the BRAKE shares (q or\n"
"                        Ctrl-C leaves); needs a terminal\n"
"\n"
"Exporter:\n"
"      --listen [ADDR:]PORT  serve the counters of every block found (or of\n"
"                        those -d, -i and -D select) to Prometheus at\n"
"                        http://ADDR:PORT/metrics; ADDR defaults to\n"
"                        127.0.0.1 (0.0.0.0 or [::] for every address)\n"
"\n"
"Saved readings:\n"
"      --input FILE      render the readings saved in FILE (- for standard\n"
"                        input) instead of reading a card: the JSON of -j or\n"
"                        of nfb-pcie-telemetry -j, one document or the\n"
"                        documents of a watch, one report each; --prometheus\n"
"                        only for totals (\"seconds\": null). Goes with no\n"
"                        option that selects a card or measures\n"
"\n"
"  -h, --help            print this help and exit\n"
"  -V, --version         print the version and exit\n"
"\n"
"Reading a card needs root (CAP_SYS_ADMIN for the configuration space and\n"
"the BAR's sysfs resource file). When a kernel driver owns the BAR, the\n"
"kernel must run with iomem=relaxed.\n"
"\n"
"Exit status:\n"
"   0  success (also when -w is interrupted)\n"
"   1  internal error (out of memory, write error)\n"
"   2  bad option or argument\n"
"   3  no matching card\n"
"   4  no permission (not root, or the BAR mapping was refused)\n"
"   5  no device tree, or it cannot be read or parsed\n"
"   6  no telemetry block, or the index is out of range; no PG381\n"
"      generator (--pg381)\n"
"   7  BAR missing, too small or cannot be mapped\n"
"   8  wrong MAGIC\n"
"   9  unsupported major version\n"
"  10  the block stayed BUSY (or its lock was held) for too long, or the\n"
"      port's counter is in use (--port)\n"
"  11  the card disappeared\n"
"  12  no DesignWare PMU above the card, or it refused the event (--port)\n"
"  13  no link in flit mode at the card or the ports above it (--flit)\n"
"  14  no hisi_ptt PMU covers the card (--ptt)\n",
          f);
}

static int fail(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return 2;
}

/* Whole-string unsigned decimal (or 0x hex when hex_ok). */
static bool parse_u64(const char *s, bool hex_ok, uint64_t max, uint64_t *v)
{
    unsigned long long x;
    char *end;

    while (*s == ' ' || *s == '\t') {
        s++;
    }
    if (*s < '0' || *s > '9') {
        return false;           /* no sign, no empty string */
    }
    errno = 0;
    x = strtoull(s, &end, hex_ok ? 0 : 10);
    if (errno || end == s || *end != '\0' || x > max) {
        return false;
    }
    *v = x;
    return true;
}

int ptt_parse_options(int argc, char **argv, ptt_opts *o, char *msg,
                      size_t msg_len)
{
    unsigned formats = 0;
    uint64_t v;
    int c;

    memset(o, 0, sizeof(*o));
    o->interval = 1.0;
    o->format = PTT_TEXT;
    o->bar = -1;
    o->offset = -1;
    o->flit_instances = PTT_FLIT_INSTANCES_DEFAULT;
    msg[0] = '\0';

    optind = 0;                 /* full re-initialisation (glibc) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:i:t:wcjD:lhV", long_opts,
                            NULL)) != -1) {
        switch (c) {
        case 'd':
            if (!*optarg) {
                return fail(msg, msg_len, "-d: empty device");
            }
            o->device = optarg;
            break;
        case 'i':
            if (!parse_u64(optarg, false, INT_MAX, &v)) {
                return fail(msg, msg_len, "-i: '%s' is not a block index "
                            "(0, 1, ...)", optarg);
            }
            o->index = (unsigned)v;
            o->index_given = true;
            break;
        case 't': {
            char *end;
            double t;

            errno = 0;
            t = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno || !isfinite(t) ||
                t < 0 || t > 86400.0) {
                return fail(msg, msg_len, "-t: '%s' is not an interval "
                            "(seconds from 0 to 86400)", optarg);
            }
            o->interval = t;
            o->interval_given = true;
            break;
        }
        case 'w':
            o->watch = true;
            break;
        case 'c':
            o->clear = true;
            break;
        case 'j':
            o->format = PTT_JSON;
            formats++;
            break;
        case OPT_CSV:
            o->format = PTT_CSV;
            formats++;
            break;
        case OPT_PROMETHEUS:
            o->format = PTT_PROMETHEUS;
            formats++;
            break;
        case 'D':
            o->id_filter = optarg;
            break;
        case OPT_ADD_ID:
            if (o->nadd_ids >= PTT_MAX_ADD_IDS) {
                return fail(msg, msg_len, "--add-id: at most %d IDs",
                            PTT_MAX_ADD_IDS);
            }
            o->add_ids[o->nadd_ids++] = optarg;
            break;
        case OPT_BAR:
            if (!parse_u64(optarg, false, 5, &v)) {
                return fail(msg, msg_len, "--bar: '%s' is not a BAR number "
                            "(0 to 5)", optarg);
            }
            o->bar = (int)v;
            break;
        case OPT_OFFSET:
            if (!parse_u64(optarg, true, (uint64_t)INT64_MAX, &v)) {
                return fail(msg, msg_len, "--offset: '%s' is not an offset "
                            "(decimal or 0x hex)", optarg);
            }
            o->offset = (int64_t)v;
            break;
        case 'l':
            o->list = true;
            break;
        case OPT_INPUT:
            if (!*optarg) {
                return fail(msg, msg_len, "--input: empty file name");
            }
            o->input = optarg;
            break;
        case OPT_LISTEN:
            if (!*optarg) {
                return fail(msg, msg_len, "--listen: empty address");
            }
            o->listen = optarg;
            break;
        case OPT_LIVE:
            o->live = true;
            break;
        case OPT_PORT:
            if (!strcmp(optarg, "rx")) {
                o->port = PTT_PORT_RX;
            } else if (!strcmp(optarg, "tx")) {
                o->port = PTT_PORT_TX;
            } else if (!strcmp(optarg, "both")) {
                o->port = PTT_PORT_BOTH;
            } else {
                return fail(msg, msg_len, "--port: '%s' is not rx, tx or "
                            "both", optarg);
            }
            break;
        case OPT_FLIT:
            o->flit = true;
            break;
        case OPT_FLIT_INSTANCES:
            if (!parse_u64(optarg, false, PTT_FLIT_INSTANCES_MAX, &v)) {
                return fail(msg, msg_len, "--flit-instances: '%s' is not a "
                            "number of instances (0 to %d; 0: the worst "
                            "case)", optarg, PTT_FLIT_INSTANCES_MAX);
            }
            o->flit_instances = (unsigned)v;
            o->flit_instances_given = true;
            break;
        case OPT_PTT:
            if (!strcmp(optarg, "in")) {
                o->ptt = PTT_TRACE_IN;
            } else if (!strcmp(optarg, "out")) {
                o->ptt = PTT_TRACE_OUT;
            } else {
                return fail(msg, msg_len, "--ptt: '%s' is not in or out",
                            optarg);
            }
            break;
        case OPT_PTT_FORMAT:
            if (!strcmp(optarg, "4dw")) {
                o->ptt_8dw = false;
            } else if (!strcmp(optarg, "8dw")) {
                o->ptt_8dw = true;
            } else {
                return fail(msg, msg_len, "--ptt-format: '%s' is not 4dw or "
                            "8dw", optarg);
            }
            o->ptt_format_given = true;
            break;
        case OPT_PTT_RAW:
            if (!*optarg) {
                return fail(msg, msg_len, "--ptt-raw: empty file name");
            }
            o->ptt_raw = optarg;
            break;
        case OPT_PG381:
            o->pg381 = true;
            break;
        case OPT_PTT_INPUT:
            if (!*optarg) {
                return fail(msg, msg_len, "--ptt-input: empty file name");
            }
            o->ptt_input = optarg;
            break;
        case 'h':
            o->help = true;
            break;
        case 'V':
            o->version = true;
            break;
        case ':':
            return fail(msg, msg_len, "%s needs an argument",
                        argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < 256) {
                return fail(msg, msg_len, "unknown option -%c", optopt);
            }
            return fail(msg, msg_len, "unknown option %s",
                        argv[optind - 1]);
        }
    }
    if (o->help || o->version) {
        return 0;
    }
    if (optind < argc) {
        return fail(msg, msg_len, "unexpected argument '%s'", argv[optind]);
    }
    if (formats > 1) {
        return fail(msg, msg_len, "choose one of --json, --csv and "
                    "--prometheus");
    }
    if ((o->ptt_format_given || o->ptt_raw || o->ptt_input) && !o->ptt) {
        return fail(msg, msg_len, "%s goes with --ptt only",
                    o->ptt_format_given ? "--ptt-format"
                    : o->ptt_raw ? "--ptt-raw" : "--ptt-input");
    }
    if (o->pg381) {
        /* one reading of the generator, not of the block */
        const char *other = o->input ? "--input" : o->list ? "--list"
            : o->clear ? "-c" : o->watch ? "-w" : o->index_given ? "-i"
            : o->interval_given ? "-t" : o->port ? "--port"
            : o->flit ? "--flit" : o->ptt ? "--ptt"
            : o->listen ? "--listen" : o->live ? "--live"
            : o->format == PTT_CSV ? "--csv"
            : o->format == PTT_PROMETHEUS ? "--prometheus" : NULL;

        if (other) {
            return fail(msg, msg_len, "%s does not go with --pg381", other);
        }
        if (o->bar >= 0 && o->offset < 0) {
            return fail(msg, msg_len, "--bar needs --offset");
        }
        return 0;
    }
    if (o->input) {
        const char *other = o->device ? "-d" : o->index_given ? "-i"
            : o->interval_given ? "-t" : o->watch ? "-w" : o->clear ? "-c"
            : o->bar >= 0 ? "--bar" : o->offset >= 0 ? "--offset"
            : o->list ? "--list" : o->id_filter ? "-D" : o->nadd_ids
            ? "--add-id" : o->listen ? "--listen" : o->live ? "--live"
            : o->port ? "--port" : o->flit ? "--flit"
            : o->flit_instances_given ? "--flit-instances"
            : o->ptt ? "--ptt" : NULL;

        if (other) {
            return fail(msg, msg_len, "%s does not go with --input (which "
                        "reads no card)", other);
        }
        return 0;
    }
    if (o->ptt) {
        /* a trace of its own: the card's TLPs, not the block */
        const char *other = o->list ? "--list" : o->clear ? "-c"
            : o->watch ? "-w" : o->port ? "--port" : o->flit ? "--flit"
            : o->listen ? "--listen" : o->live ? "--live"
            : o->index_given ? "-i" : o->bar >= 0 ? "--bar"
            : o->offset >= 0 ? "--offset"
            : o->format == PTT_CSV ? "--csv"
            : o->format == PTT_PROMETHEUS ? "--prometheus" : NULL;

        if (other) {
            return fail(msg, msg_len, "%s does not go with --ptt", other);
        }
        if (o->ptt_input) {
            other = o->device ? "-d" : o->interval_given ? "-t"
                : o->id_filter ? "-D" : o->nadd_ids ? "--add-id"
                : o->ptt_raw ? "--ptt-raw" : NULL;
            if (other) {
                return fail(msg, msg_len, "%s does not go with --ptt-input "
                            "(which traces nothing)", other);
            }
            return 0;
        }
        if (o->interval == 0) {
            return fail(msg, msg_len, "--ptt needs an interval above 0 (the "
                        "trace runs over the tool's interval)");
        }
        return 0;
    }
    if (o->listen || o->live) {
        const char *mode = o->listen ? "--listen" : "--live";
        const char *other = o->listen && o->live ? "--live"
            : o->watch ? "-w" : o->clear ? "-c" : o->list ? "--list"
            : formats ? "an output format option"
            : o->listen && o->interval_given ? "-t"
            : o->port ? "--port" : o->flit ? "--flit" : NULL;

        if (other) {
            return fail(msg, msg_len, "%s does not go with %s", other, mode);
        }
        if (o->live && o->interval == 0) {
            return fail(msg, msg_len, "--live needs an interval above 0");
        }
    }
    if (o->bar >= 0 && o->offset < 0) {
        return fail(msg, msg_len, "--bar needs --offset");
    }
    if (o->flit_instances_given && !o->flit) {
        return fail(msg, msg_len, "--flit-instances goes with --flit only");
    }
    if (o->flit) {
        /* a measurement of its own: the link, not the block */
        const char *other = o->list ? "--list" : o->clear ? "-c"
            : o->port ? "--port" : o->index_given ? "-i"
            : o->bar >= 0 ? "--bar" : o->offset >= 0 ? "--offset"
            : o->format == PTT_CSV ? "--csv"
            : o->format == PTT_PROMETHEUS ? "--prometheus" : NULL;

        if (other) {
            return fail(msg, msg_len, "%s does not go with --flit", other);
        }
        if (o->interval == 0) {
            return fail(msg, msg_len, "--flit needs an interval above 0 (it "
                        "measures over the tool's intervals)");
        }
    }
    if (o->list && (o->clear || o->watch || formats || o->port)) {
        return fail(msg, msg_len, "--list goes with no measuring or output "
                    "option");
    }
    if (o->clear && o->watch) {
        return fail(msg, msg_len, "--clear and --watch exclude each other");
    }
    if (o->watch && o->interval == 0) {
        return fail(msg, msg_len, "--watch needs an interval above 0");
    }
    if (o->format == PTT_PROMETHEUS && !o->watch) {
        o->interval = 0;        /* a totals reading */
    }
    if (o->port) {
        /* the port counts only while the tool measures an interval */
        if (o->clear) {
            return fail(msg, msg_len, "--port does not go with --clear");
        }
        if (o->format == PTT_CSV || o->format == PTT_PROMETHEUS) {
            return fail(msg, msg_len, "--port goes with the text report and "
                        "--json only");
        }
        if (o->interval == 0) {
            return fail(msg, msg_len, "--port needs an interval above 0 (the "
                        "port counts only over the tool's intervals)");
        }
    }
    return 0;
}
