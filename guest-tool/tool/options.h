/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command line of pcie-telemetry, kept apart from main() so that the unit
 * tests can parse command lines without a card.
 */
#ifndef PTT_OPTIONS_H
#define PTT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PTT_MAX_ADD_IDS 16
/* Flit->Ack instances of --flit: the 5-bit field of the Control register */
#define PTT_FLIT_INSTANCES_DEFAULT 31
#define PTT_FLIT_INSTANCES_MAX     31

typedef enum ptt_format {
    PTT_TEXT, PTT_JSON, PTT_CSV, PTT_PROMETHEUS,
} ptt_format;

/* --port: which payload the port above the card counts */
typedef enum ptt_port {
    PTT_PORT_NONE, PTT_PORT_RX, PTT_PORT_TX, PTT_PORT_BOTH,
} ptt_port;

/* --ptt: the direction of a hisi_ptt trace */
typedef enum ptt_trace {
    PTT_TRACE_NONE, PTT_TRACE_IN, PTT_TRACE_OUT,
} ptt_trace;

typedef struct ptt_opts {
    const char *device;         /* -d */
    unsigned index;             /* -i */
    double interval;            /* -t, seconds; 0 = totals */
    bool watch, clear, list, help, version;
    ptt_format format;
    const char *id_filter;      /* -D/--id */
    const char *add_ids[PTT_MAX_ADD_IDS + 1];   /* NULL-terminated */
    unsigned nadd_ids;
    int bar;                    /* -1: from the device tree */
    int64_t offset;             /* -1: from the device tree */
    const char *input;          /* --input: saved readings, "-" stdin */
    const char *listen;         /* --listen [ADDR:]PORT: the exporter */
    bool live;                  /* --live: the screen redrawn in place */
    ptt_port port;              /* --port rx|tx|both */
    bool flit;                  /* --flit: the link's flit mode */
    unsigned flit_instances;    /* --flit-instances (default 31) */
    ptt_trace ptt;              /* --ptt in|out */
    bool ptt_8dw;               /* --ptt-format 8dw (default 4dw) */
    bool ptt_format_given;
    const char *ptt_raw;        /* --ptt-raw FILE: the AUX bytes as read */
    const char *ptt_input;      /* --ptt-input FILE: decode a saved trace */
    bool pg381;                 /* --pg381: the PG381 generator's counters */
    bool index_given, interval_given, flit_instances_given;
} ptt_opts;

/*
 * Parses argv into o. Returns 0, or 2 (the usage exit code) with a
 * one-line message in msg. Can be called more than once.
 */
int ptt_parse_options(int argc, char **argv, ptt_opts *o, char *msg,
                      size_t msg_len);

/* The text of --help. */
void ptt_print_help(FILE *f);

#endif
