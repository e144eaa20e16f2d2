/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libpcie-telemetry: read CESNET NDK PCIE_TELEMETRY_MI blocks.
 *
 * Two halves:
 *  - finding a block: scan the PCI functions with libpci, read the NDK
 *    device tree from the card's vendor-specific extended capability, pick
 *    the N-th telemetry node and map the BAR it lives in through
 *    /sys/bus/pci/devices/<BDF>/resourceN (ptl_open, ptl_list);
 *  - measuring: snapshot, read-out, difference of two readings, decoding
 *    into the reference reader's data model and rendering as text, JSON,
 *    CSV or Prometheus (ptl_block_*, ptl_data_*, ptl_format_*).
 *
 * The measuring half talks to the block only through ptl_regs_ops, so it
 * runs unchanged on a mapped BAR and on anything else that answers register
 * accesses (the unit tests put the QEMU-free model of the block there).
 *
 * Functions that can fail return a ptl_err and fill a ptl_error; the codes
 * are the tool's exit codes (see pcie-telemetry(1)).
 */
#ifndef PCIE_TELEMETRY_H
#define PCIE_TELEMETRY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PTL_MAGIC, PTL_REG_*, PTL_CMD_*, the counter layout, the VSEC */
#include "pcie-telemetry-regs.h"
/* PCIe 6 flit mode: the flit bits and capabilities 0x0031-0x0033 */
#include "pcie-telemetry-flit.h"

#define PTL_BUSY_TIMEOUT_NS  1000000000ull

/* Errors; the values are the tool's exit codes. */
typedef enum ptl_err {
    PTL_OK = 0,
    PTL_E_INTERNAL = 1,     /* out of memory, unexpected system error */
    PTL_E_USAGE = 2,        /* bad option or argument */
    PTL_E_NO_CARD = 3,      /* no matching PCI function */
    PTL_E_PERM = 4,         /* not allowed to read config space or BAR */
    PTL_E_DEVTREE = 5,      /* no device tree, or it cannot be read/parsed */
    PTL_E_NO_NODE = 6,      /* no telemetry node, or index out of range */
    PTL_E_BAR = 7,          /* BAR missing, too small or cannot be mapped */
    PTL_E_MAGIC = 8,        /* MAGIC is not 0x50544C4D */
    PTL_E_VERSION = 9,      /* major version is not 2 */
    PTL_E_BUSY = 10,        /* BUSY over 1 s, or the card's lock 10 s */
    PTL_E_GONE = 11,        /* the card disappeared (removed, all ones) */
    PTL_E_PMU = 12,         /* no PMU above the card, or it refused the event */
    PTL_E_NO_FLIT = 13,     /* no flit-mode link at the card (--flit) */
    PTL_E_NO_PTT = 14,      /* no hisi_ptt PMU covers the card (--ptt) */
} ptl_err;

typedef struct ptl_error {
    ptl_err code;
    char msg[512];          /* one line, no trailing newline */
} ptl_error;

/* Sets err (may be NULL) and returns code. */
ptl_err ptl_set_error(ptl_error *err, ptl_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Short name of a code ("no card", "permission", ...) */
const char *ptl_err_name(ptl_err code);

/* ---------------------------------------------------------------------
 * Register access. Offsets are bytes from the start of the block.
 */
typedef struct ptl_regs_ops {
    uint32_t (*read32)(void *opaque, uint32_t offset);
    void (*write32)(void *opaque, uint32_t offset, uint32_t value);
    /* 64-bit load on the counter window; NULL: two read32, low first */
    uint64_t (*read64)(void *opaque, uint32_t offset);
    /* Clock for the snapshot timestamps; NULL: CLOCK_MONOTONIC */
    uint64_t (*now_ns)(void *opaque);
} ptl_regs_ops;

/* Layout read from the configuration registers (0x00-0x3C). */
typedef struct ptl_layout {
    uint32_t magic, version;
    unsigned endpoints, dma_ports, probes;          /* CFG_TOPOLOGY */
    unsigned entries, cnt_width, per_endpoint;      /* CFG_LAYOUT */
    unsigned pcie_channels, pcie_buses, pcie_regions, pcie_brakes;
    unsigned dma_channels, dma_buses, dma_regions, dma_brakes;
    unsigned drain_period;                          /* 0 in CFG_DRAIN = 65536 */
    unsigned item_bytes;
    uint32_t cnt_base;
    unsigned rq_regions, rc_regions, up_regions, down_regions;
    unsigned rq_bytes, rc_bytes, up_bytes, down_bytes;
    unsigned hist_bands, pcie_hists, dma_hists;
    unsigned tag_capacity, stfifo_capacity;
    unsigned brake_reasons;     /* pcie_brakes - hist_bands * pcie_hists */
} ptl_layout;

/* One read-out: raw counters plus the live per-endpoint registers. */
typedef struct ptl_reading {
    uint64_t t_ns;              /* clock right at the SNAPSHOT write */
    uint32_t status;            /* STATUS after the read-out */
    unsigned entries, endpoints;
    uint64_t *counters;         /* [entries] */
    uint32_t *pcie_status;      /* [endpoints] PCIE_STATUS */
    uint32_t *tags;             /* [endpoints] PCIE_TAGS */
    uint32_t *stfifo;           /* [endpoints] PCIE_STFIFO */
} ptl_reading;

typedef struct ptl_block ptl_block;

/*
 * Open a block behind ops: checks MAGIC, major VERSION 2 and that the
 * layout is consistent (counter window inside the 64 KiB block).
 */
ptl_err ptl_block_open(const ptl_regs_ops *ops, void *opaque,
                       ptl_block **out, ptl_error *err);
void ptl_block_close(ptl_block *b);
const ptl_layout *ptl_block_layout(const ptl_block *b);

ptl_reading *ptl_reading_new(const ptl_layout *lay);
void ptl_reading_free(ptl_reading *r);

/*
 * One reading: write READ_SEL = 0 (the snapshot copy), SNAPSHOT (t_ns is
 * the mean of the clock just before and after that write), poll STATUS
 * while BUSY (1 s timeout on the same clock; the last poll's value is the
 * reading's status), load the counters of the existing endpoints (entries
 * past endpoints x per_endpoint stay 0), read PCIE_STATUS, PCIE_TAGS and
 * PCIE_STFIFO of each endpoint. BAR accesses: 2 posted writes, n >= 1
 * STATUS reads, endpoints x per_endpoint 64-bit loads (twice as many 32-bit
 * reads without read64), 3 x endpoints reads; 53 + n for the default card.
 * All ones where the block cannot produce them: PTL_E_GONE (a removed card
 * that reads 0 is noticed by ptl_handle_read only).
 */
ptl_err ptl_block_read(ptl_block *b, ptl_reading *r, ptl_error *err);
/*
 * COMMAND bits: clear the counters (bit 1), flags (2), lowest values (3).
 * ptl_block_clear writes all three at once, as the reference reader's
 * clear does, and waits while BUSY; ptl_block_clear_flags is a single
 * posted write of bit 2 (and bit 3 with lowest_too).
 */
ptl_err ptl_block_clear(ptl_block *b, ptl_error *err);
ptl_err ptl_block_clear_flags(ptl_block *b, bool lowest_too, ptl_error *err);
uint32_t ptl_block_status(ptl_block *b);

/*
 * out = later - earlier, counters modulo 2^cnt_width; live fields, status
 * and t_ns from later. out may alias later.
 */
void ptl_reading_diff(const ptl_layout *lay, const ptl_reading *earlier,
                      const ptl_reading *later, ptl_reading *out);

/* ---------------------------------------------------------------------
 * The reference reader's data model (the keys of its JSON output).
 */
typedef enum ptl_bus_kind {
    PTL_BUS_RQ, PTL_BUS_RC, PTL_BUS_UP, PTL_BUS_DOWN,
} ptl_bus_kind;

typedef struct ptl_bus {
    char name[32];              /* "PTC -> PCIe (RQ)", "DMA0 -> PTC (UP)" */
    ptl_bus_kind kind;
    unsigned port;              /* DMA port of UP/DOWN buses */
    bool pcie_clk, has_mvb, dma_up;
    uint64_t words, backpressure, transactions, mvb, mvb_backpressure, items;
    unsigned nregions;          /* regions the bus really has */
    uint64_t *regions;
    unsigned region_bytes;
} ptl_bus;

typedef struct ptl_endpoint {
    unsigned index;
    bool link_up, ext_tag, tag_10b;
    unsigned mps, mrrs, rcb;    /* bytes */
    unsigned tags_free, tags_free_min, stfifo_free, stfifo_free_min;
    uint64_t pcie_cycles, dma_cycles;
    unsigned nbrakes;           /* reasons, without the histogram bands */
    uint64_t *brakes;
    unsigned nhists, nbands;
    uint64_t *hists;            /* [nhists * nbands], tags first */
    unsigned nbuses;            /* 2 + 2 * dma_ports: RQ, RC, UP0, DOWN0, ... */
    ptl_bus *buses;
} ptl_endpoint;

/*
 * What a perf PMU of the port above the card counted of one direction of
 * the card's link while the card's interval was measured (see "The port
 * above a card" below).
 */
typedef struct ptl_port_count {
    bool measured;              /* false: not counted in this interval */
    char event[64];             /* the PMU's event, "Rx_PCIe_TLP_Data_Payload" */
    uint64_t value;             /* its count: bytes for the payload events */
    double seconds;             /* the time it counted (perf's time running) */
    double enabled_seconds;     /* the time it was enabled */
} ptl_port_count;

typedef struct ptl_port_data {
    char port[16];              /* the port's PCI address, "0000:00:01.0" */
    char pmu[64];               /* its PMU, "dwc_rootport_8" */
    char card[16];              /* the card's PCI function below it */
    unsigned endpoint;          /* the block's endpoint of that function */
    ptl_port_count rx;          /* card -> port (the block's RQ bus) */
    ptl_port_count tx;          /* port -> card (the block's RC bus) */
} ptl_port_data;

typedef struct ptl_data {
    bool busy, lost_deltas, readout_overrun;
    ptl_layout config;
    unsigned nendpoints;
    ptl_endpoint *endpoints;
    /*
     * Both ends of the link: NULL, or what the port counted over the same
     * interval (malloc'd; ptl_data_free frees it). The text report and the
     * JSON show it after the block's report; CSV and Prometheus leave it
     * out.
     */
    ptl_port_data *port;
} ptl_data;

ptl_data *ptl_data_decode(const ptl_layout *lay, const ptl_reading *r);
void ptl_data_free(ptl_data *d);

/* Figures of one bus over `seconds` (<= 0: totals, no rates). */
typedef struct ptl_bus_figures {
    double used_pct, words_pct, mfb_stall_pct;
    double mvb_stall_pct;       /* NAN without MVB */
    double *region_pct;         /* [nregions], owned by the caller's buffer */
    double gbps, mpps;          /* NAN for totals */
    double rd_pct;              /* NAN except on UP buses */
    double avg_bytes;           /* NAN without SOFs */
} ptl_bus_figures;

void ptl_bus_compute(const ptl_endpoint *ep, const ptl_bus *bus,
                     unsigned item_bytes, double seconds,
                     ptl_bus_figures *f, double *region_pct_buf);

/* ---------------------------------------------------------------------
 * Output. seconds > 0: a measured interval; seconds <= 0: totals since
 * the last clear (-t 0), where the text report leaves the Gbps and Mpps
 * columns empty and the clock line out and JSON has "seconds": null. Text
 * and JSON are the reference reader's format_report and json.dumps(...,
 * indent=4) byte for byte, each ending in one newline. All return 0 or -1
 * with errno on a write error.
 */
int ptl_format_text(FILE *f, const ptl_data *d, double seconds);
int ptl_format_json(FILE *f, const ptl_data *d, double seconds);
/*
 * CSV: one row per bus; the header once per stream. Columns: unix_time,
 * seconds, device, index, endpoint, bus, kind, port, cycles, the raw
 * counters, regions (';'-joined), region_bytes, item_bytes, the figures
 * (empty for NAN; region_pct ';'-joined), lost_deltas, readout_overrun.
 */
int ptl_format_csv_header(FILE *f);
/* unix_time NAN, device NULL, index UINT_MAX: empty fields */
int ptl_format_csv(FILE *f, const ptl_data *d, double seconds,
                   double unix_time, const char *device, unsigned index);
/*
 * Prometheus text exposition (0.0.4) of raw counters (a totals reading):
 * ndk_pcie_telemetry_*_total counters and gauges labelled device, index
 * and endpoint (the block-wide item_bytes, lost_deltas and readout_overrun
 * only device and index); index UINT_MAX: index="".
 */
int ptl_format_prometheus(FILE *f, const ptl_data *d, const char *device,
                          unsigned index);

/* One block of an exposition of several. */
typedef struct ptl_prom_block {
    const char *device;         /* label device */
    unsigned index;             /* label index (UINT_MAX: "") */
    const ptl_data *data;       /* NULL: not read in this scrape */
    double scrape_seconds;      /* what its snapshot and read-out took */
} ptl_prom_block;

/*
 * The exposition of n blocks, each metric family once with the samples of
 * every block that has data. exporter adds, for every block, the gauges
 * ndk_pcie_telemetry_up (0 for a block without data) and
 * ndk_pcie_telemetry_scrape_duration_seconds.
 */
int ptl_format_prometheus_blocks(FILE *f, const ptl_prom_block *blocks,
                                 unsigned n, bool exporter);

/*
 * What the text report calls BRAKE reason k ("no free PCIe tag", ...) and
 * histogram band k ("none", "<=1/8", "<=1/2", "rest"), whatever the number
 * of bands; NULL for one without a name, which is shown as "reason K" or
 * "band K".
 */
const char *ptl_reason_name(unsigned k);
const char *ptl_band_name(unsigned k);

/*
 * Counters narrower than 64 bits extended to 64 across wrap-arounds, so
 * that an exporter's counters only go back when the block's counters are
 * cleared. Exact as long as no counter advances by 2^CNT_WIDTH or more
 * between two readings (ptl_counter_ext_max_seconds). A clear is told
 * from a wrap-around by the cycle counters: after a clear they stand
 * near 0, after a wrap-around where their clock rate, measured over the
 * readings before, puts them.
 */
typedef struct ptl_counter_ext ptl_counter_ext;

typedef enum ptl_ext_result {
    PTL_EXT_FIRST,              /* the first reading: counters as read */
    PTL_EXT_CONTINUED,          /* extended from the previous reading */
    PTL_EXT_RESTARTED,          /* the counters were cleared: as read */
} ptl_ext_result;

ptl_counter_ext *ptl_counter_ext_new(const ptl_layout *lay);
void ptl_counter_ext_free(ptl_counter_ext *x);
/* Replaces r's counters (of the existing endpoints) by their extension. */
ptl_ext_result ptl_counter_ext_update(ptl_counter_ext *x, ptl_reading *r);
/* Start again: the next reading is a first one. */
void ptl_counter_ext_forget(ptl_counter_ext *x);
/*
 * The longest time between two readings that keeps the extension exact
 * at these clock frequencies: (2^CNT_WIDTH - 1) / (k x f), k the most a
 * counter of that clock advances per cycle (1 for cycles, words, stalls;
 * the regions for SOFs and MVB items; the items of a word for items).
 */
double ptl_counter_ext_max_seconds(const ptl_layout *lay, double pcie_hz,
                                   double dma_hz);
/*
 * That bound at the fastest clock rates the cycle counters have shown
 * (INFINITY before any rate is known), and in *span_s the time between
 * the last two readings (0 unless the last update continued): a caller
 * warns when the span exceeds the bound.
 */
double ptl_counter_ext_limit(const ptl_counter_ext *x, double *span_s);

/* ---------------------------------------------------------------------
 * Saved readings: a strict JSON parser and the documents that -j (and the
 * reference reader's -j) write, {"seconds": S or null, "data": {...}},
 * read back into ptl_data.
 */
typedef enum ptl_json_type {
    PTL_JSON_NULL, PTL_JSON_FALSE, PTL_JSON_TRUE, PTL_JSON_NUMBER,
    PTL_JSON_STRING, PTL_JSON_ARRAY, PTL_JSON_OBJECT,
} ptl_json_type;

#define PTL_JSON_MAX_DEPTH   64         /* nested arrays and objects */
#define PTL_JSON_MAX_VALUES  1000000    /* values in one parse */

typedef struct ptl_json {
    ptl_json_type type;
    unsigned line, column;      /* where the value starts, 1-based */
    double number;              /* numbers (+-HUGE_VAL when too large) */
    bool is_uint;               /* a number without sign, fraction and */
    uint64_t uint;              /* exponent that fits 64 bits: its value */
    char *string;               /* strings: UTF-8, NUL-terminated */
    size_t n;                   /* array items or object members */
    struct ptl_json *items;     /* [n], in the order of the text */
    char **keys;                /* [n], objects (no duplicates) */
} ptl_json;

/*
 * Parse one JSON value (RFC 8259, strict: see ptl-json.c) from text[0..len)
 * whose first byte is at line, col of its file (0: 1). With end, the value
 * may be followed by anything and *end is the offset just past it; without,
 * only whitespace may follow. Errors: PTL_E_USAGE with "line L, column C:
 * what is wrong", PTL_E_INTERNAL when out of memory.
 */
ptl_err ptl_json_parse(const char *text, size_t len, unsigned line,
                       unsigned col, size_t *end, ptl_json **out,
                       ptl_error *err);
void ptl_json_free(ptl_json *v);
/* The member key of an object, or NULL. */
const ptl_json *ptl_json_get(const ptl_json *obj, const char *key);

/*
 * A parsed document as ptl_data (free with ptl_data_free) and its seconds
 * (0 for null: totals). Every key of the reference's schema must be there
 * with its type, no other key, the buses under their names in their order,
 * counts from 0 to 2^64 - 1, seconds null or above 0. A top-level "port"
 * (what ptl_format_json writes of ptl_data.port) may follow and becomes
 * ptl_data.port. Errors: PTL_E_USAGE with "line L, column C: <key path>:
 * what is wrong".
 */
ptl_err ptl_data_from_json(const ptl_json *doc, ptl_data **out,
                           double *seconds, ptl_error *err);

/*
 * The documents of a stream, one after the other (a watch's output is
 * documents separated by whitespace), each read as soon as it is complete,
 * at most PTL_INPUT_MAX_DOCUMENT bytes each.
 */
#define PTL_INPUT_MAX_DOCUMENT  (4u << 20)

typedef struct ptl_input ptl_input;

ptl_input *ptl_input_new(FILE *f);      /* NULL when out of memory */
void ptl_input_free(ptl_input *in);
/*
 * The next document: PTL_OK with *d and *seconds, or PTL_OK with *d NULL
 * after the last one. A malformed document: PTL_E_USAGE with "document N:
 * line L, column C: ..." (lines of the whole stream); a read error or no
 * memory: PTL_E_INTERNAL.
 */
ptl_err ptl_input_next(ptl_input *in, ptl_data **d, double *seconds,
                       ptl_error *err);
/* Documents returned so far. */
unsigned ptl_input_count(const ptl_input *in);

/* ---------------------------------------------------------------------
 * Finding cards and blocks (libpci, device tree, sysfs).
 */
typedef struct ptl_find_opts {
    /* -d: PCI slot (lspci -s syntax), sysfs device path, or /dev/nfbN */
    const char *device;         /* NULL = any */
    const char *id_filter;      /* vendor:device (lspci -d syntax) or NULL */
    /* more vendor:device IDs to accept, NULL-terminated, or NULL */
    const char *const *extra_ids;
    int bar;                    /* -1: from the device tree */
    int64_t offset;             /* -1: from the device tree */
} ptl_find_opts;

void ptl_find_opts_init(ptl_find_opts *o);

/* One telemetry node of a card's device tree. */
typedef struct ptl_node_info {
    char path[128];             /* path in the device tree */
    unsigned bar;
    uint64_t offset, size;
    uint32_t version;
    unsigned pcie_endpoints;
} ptl_node_info;

/*
 * The PCI Express link of a function, as lspci shows it: Link Status (what
 * was negotiated) and Link Capabilities (the most the function can do).
 * Speeds are the registers' codes: 1 = 2.5 GT/s, 2 = 5, 3 = 8, 4 = 16,
 * 5 = 32, 6 = 64 GT/s.
 */
typedef struct ptl_link {
    bool present;               /* a PCI Express capability with a link */
    unsigned speed, width;      /* Link Status: speed code, lanes */
    unsigned max_speed, max_width;  /* Link Capabilities */
} ptl_link;

/*
 * The link from the PCI Express capability's PCI Express Capabilities
 * (+0x02), Link Capabilities (+0x0C) and Link Status (+0x12) registers.
 * Root complex integrated endpoints and event collectors have no link, and
 * neither has a function whose registers read all ones.
 */
void ptl_link_decode(uint16_t flags, uint32_t lnkcap, uint16_t lnksta,
                     ptl_link *link);
/* "2.5 GT/s" ... "64 GT/s", or NULL for a code that is none of those. */
const char *ptl_link_speed_text(unsigned speed);

/*
 * The identity of the firmware, as nfb-info shows it: properties of the
 * device tree's /firmware node, and the serial number of /board (where
 * the NDK driver puts it), else of /firmware. Each string is the first
 * string of its property, control characters and bytes that are not UTF-8
 * replaced by '?', cut to fit with "..." at the end; "" when the property
 * is missing or empty.
 */
#define PTL_FIRMWARE_TEXT   128

typedef struct ptl_firmware_info {
    char card_name[PTL_FIRMWARE_TEXT];          /* card-name */
    char project_name[PTL_FIRMWARE_TEXT];       /* project-name */
    char project_variant[PTL_FIRMWARE_TEXT];    /* project-variant */
    char project_version[PTL_FIRMWARE_TEXT];    /* project-version */
    char build_tool[PTL_FIRMWARE_TEXT];         /* build-tool */
    char build_author[PTL_FIRMWARE_TEXT];       /* build-author */
    char build_revision[PTL_FIRMWARE_TEXT];     /* build-revision */
    /* serial-number (32 bits) in decimal, or serial-number-string */
    char serial_number[PTL_FIRMWARE_TEXT];
    bool has_build_time;        /* build-time is there and 32 bits long */
    uint32_t build_time;        /* seconds since 1970-01-01 00:00 UTC */
} ptl_firmware_info;

typedef struct ptl_card_info {
    char slot[16];              /* "0000:01:00.0" */
    char sysfs[PATH_MAX];       /* /sys/bus/pci/devices/0000:01:00.0 */
    uint16_t vendor, device;
    ptl_link link;
    bool has_vsec;
    int endpoint;               /* from the VSEC, -1 if not given */
    unsigned nnodes;
    ptl_node_info *nodes;
    ptl_firmware_info firmware; /* all empty without a readable tree */
    char tree_error[256];       /* why the tree could not be read, or "" */
} ptl_card_info;

/*
 * What --list says about a card besides its blocks, each line after
 * indent and ending in a newline: "link 8 GT/s x8 (max 16 GT/s x16)" (the
 * maximum only when it differs), "card C, serial S, project P V (variant
 * A)" and "built 2026-01-02 03:04:05 UTC by AUTHOR with TOOL, revision R"
 * (the time in the local time zone), with only the parts that are there; a
 * line without any is left out. Returns 0, or -1 with errno on a write
 * error.
 */
int ptl_format_card_lines(FILE *f, const ptl_card_info *c,
                          const char *indent);

/* Every matching card (with or without a readable tree). */
ptl_err ptl_list(const ptl_find_opts *o, ptl_card_info **cards, unsigned *n,
                 ptl_error *err);
void ptl_list_free(ptl_card_info *cards, unsigned n);

typedef struct ptl_handle ptl_handle;

/*
 * Find the card, the index-th telemetry node (or use opts->bar/offset),
 * map the BAR and open the block under the card's advisory lock, which is
 * released again before returning.
 */
ptl_err ptl_open(const ptl_find_opts *o, unsigned index, ptl_handle **out,
                 ptl_error *err);
void ptl_close(ptl_handle *h);
/*
 * ptl_open in its two steps, for a caller that recovers from a fault of a
 * BAR access (SIGBUS, e.g. a mapping the kernel revoked): ptl_open_mapped
 * finds the card and the node and maps the BAR without touching it, so
 * the caller holds the handle before any access; ptl_handle_attach then
 * opens the block (MAGIC, VERSION, layout) under the card's lock. A
 * handle that is not attached can only be closed (ptl_close also drops
 * the lock).
 */
ptl_err ptl_open_mapped(const ptl_find_opts *o, unsigned index,
                        ptl_handle **out, ptl_error *err);
ptl_err ptl_handle_attach(ptl_handle *h, ptl_error *err);
ptl_block *ptl_handle_block(ptl_handle *h);
const ptl_card_info *ptl_handle_card(const ptl_handle *h);
const ptl_node_info *ptl_handle_node(const ptl_handle *h);
/*
 * The advisory lock (flock on the mapped resource file) around one
 * SNAPSHOT and its read-out, so that two readers never interleave.
 */
ptl_err ptl_handle_lock(ptl_handle *h, ptl_error *err);
void ptl_handle_unlock(ptl_handle *h);
/*
 * Whether the card is still there: PTL_OK while its sysfs directory is the
 * one ptl_open found, PTL_E_GONE ("<slot> disappeared (...)") once it is
 * gone or belongs to a device added since. One stat(), no BAR access.
 * After a hot removal the kernel deletes the directory before the card is
 * ejected or its slot powered off; from then on the mapping reads all ones
 * on PCIe hosts but 0 under QEMU, which the register checks cannot tell
 * from an idle block, so a reading is only good if the card is still
 * present after it.
 */
ptl_err ptl_handle_present(ptl_handle *h, ptl_error *err);
/*
 * ptl_block_read and ptl_block_clear on the handle's block, followed by
 * ptl_handle_present: a reading of a removed card is PTL_E_GONE, never
 * returned as PTL_OK, and every PTL_E_GONE names the card. The BAR
 * accesses are those of the block functions; the caller holds the lock.
 */
ptl_err ptl_handle_read(ptl_handle *h, ptl_reading *r, ptl_error *err);
ptl_err ptl_handle_clear(ptl_handle *h, ptl_error *err);

/* Device tree helpers (exposed for tests and for --list). */
ptl_err ptl_devtree_decompress(const void *xz, size_t len, void **fdt,
                               size_t *fdt_len, ptl_error *err);
ptl_err ptl_devtree_nodes(const void *fdt, size_t len, unsigned endpoint,
                          ptl_node_info **nodes, unsigned *n, ptl_error *err);
/*
 * The firmware's identity from a decompressed tree; all empty when the
 * tree is not a flattened device tree or has none of the properties.
 */
void ptl_devtree_firmware(const void *fdt, size_t len, ptl_firmware_info *fw);

/* Any node of a card's device tree, found by its compatible string. */
typedef struct ptl_dt_node {
    char path[128];             /* path in the device tree */
    unsigned bar;               /* the BAR of its MI bus */
    uint64_t offset, size;      /* reg */
    uint32_t clock_hz;          /* clock-frequency, 0 when absent */
} ptl_dt_node;

/*
 * The nodes compatible with compatible on an MI bus of endpoint, in tree
 * order, placed as the telemetry nodes are (*nodes malloc'd, free() it;
 * none: PTL_OK with *n 0). Errors: PTL_E_DEVTREE as ptl_devtree_nodes.
 */
ptl_err ptl_devtree_compatible(const void *fdt, size_t len,
                               const char *compatible, unsigned endpoint,
                               ptl_dt_node **nodes, unsigned *n,
                               ptl_error *err);

/*
 * 32-bit accesses to a function's configuration space (offsets from its
 * start). Each returns false when the access failed; error (may be NULL)
 * then says why, or returns "".
 */
typedef struct ptl_config_ops {
    bool (*read32)(void *opaque, uint32_t offset, uint32_t *value);
    bool (*write32)(void *opaque, uint32_t offset, uint32_t value);
    const char *(*error)(void *opaque);
} ptl_config_ops;

/*
 * The telemetry nodes of the function named name (for messages) from the
 * device-tree VSEC at cap: its endpoint register and tree length, the
 * tree's words (write the index, read the data register), decompressed,
 * then the nodes on its endpoint. *endpoint: from the VSEC, -1 if not
 * given or not read. fw (may be NULL): the firmware's identity, filled
 * once the tree is decompressed, whatever its nodes. Errors are what
 * ptl_list shows as tree_error; a tree without a node on this endpoint is
 * PTL_E_NO_NODE (*n is then 0).
 */
ptl_err ptl_devtree_read(const ptl_config_ops *ops, void *opaque,
                         unsigned cap, const char *name, int *endpoint,
                         ptl_node_info **nodes, unsigned *n,
                         ptl_firmware_info *fw, ptl_error *err);

/* ---------------------------------------------------------------------
 * The PG381 performance traffic generator (docs/pg381.md): a 64 KiB
 * window in BAR0 found by its device-tree node, its counters read at one
 * instant through CAPTURE_ALL and the figures worked out of them.
 */
#define PTL_PG381_COMPATIBLE    "xlnx,perf-axi-tg-1.0"
#define PTL_PG381_WINDOW        0x10000u
#define PTL_PG381_STATUS_BASE   0x2000u
#define PTL_PG381_CAPTURE_ALL   0x2234u /* a read latches the copies */
#define PTL_PG381_AL_BASE       0x2238u /* copy of 0x2000 + 4k at + 4k */
#define PTL_PG381_RBEAT         0x2014u
#define PTL_PG381_ARREQ         0x2018u
#define PTL_PG381_RLAST         0x201Cu
#define PTL_PG381_RBW_EFF_CLK   0x2020u
#define PTL_PG381_RWORST        0x2024u
#define PTL_PG381_RBEST         0x2028u
#define PTL_PG381_RAVG          0x202Cu /* a sum of latencies */
#define PTL_PG381_AWREQ         0x2030u
#define PTL_PG381_WLAST         0x2034u
#define PTL_PG381_BRESP         0x2038u
#define PTL_PG381_WRBEAT        0x203Cu
#define PTL_PG381_WBW_EFF_CLK   0x2040u
#define PTL_PG381_WWORST        0x2044u
#define PTL_PG381_WBEST         0x2048u
#define PTL_PG381_WAVG          0x204Cu
#define PTL_PG381_FLOW_EMPTY    0x2050u
#define PTL_PG381_FE_DONE       (1u << 9)
#define PTL_PG381_FE_ERROR      (1u << 4)
#define PTL_PG381_CARD_ID       0x6000u
#define PTL_PG381_CARD_MAGIC    0x50473831u     /* "PG81" */
#define PTL_PG381_CARD_CLOCK    0x6008u
#define PTL_PG381_CARD_ERROR    0x600Cu
#define PTL_PG381_CARD_PROG_LEN 0x6010u
#define PTL_PG381_RAM           0x8000u /* instruction k at + 0x40 k */
#define PTL_PG381_INSTR_BYTES   0x40u
#define PTL_PG381_INSTRS        512u

/* One channel's counters (the CAPTURE_ALL copies) and figures. */
typedef struct ptl_pg381_channel {
    uint32_t requests;          /* ARREQ, AWREQ */
    uint32_t beats;             /* RBEAT, WRBEAT */
    uint32_t lasts;             /* RLAST, WLAST */
    uint32_t responses;         /* BRESP; reads: RLAST */
    uint32_t eff_cycles;        /* RBW_EFF_CLK, WBW_EFF_CLK */
    uint32_t best, worst, sum;  /* latencies, cycles; sum wraps at 2^32 */
    /*
     * Bytes a beat: 2^axi_size of the program's instructions of this
     * channel (the card's instruction RAM; the block has no register of
     * its data width); 0 when they differ or there are none.
     */
    unsigned beat_bytes;
    double bytes_per_s;         /* NAN: no beat size or no cycles */
    double best_ns, worst_ns, avg_ns;   /* NAN: no requests */
} ptl_pg381_channel;

typedef struct ptl_pg381 {
    char slot[16];              /* the card */
    char path[128];             /* its node, or "(--bar/--offset)" */
    unsigned bar;
    uint64_t offset;
    uint32_t clock_hz;          /* clock-frequency, else CLOCK (0x6008) */
    ptl_pg381_channel rd, wr;
    uint32_t flow_empty;        /* the copy of FLOW_EMPTY */
    bool done, error;           /* its bits 9 and 4 */
    uint32_t error_reg;         /* ERROR (0x600C) */
} ptl_pg381;

/*
 * Reads one generator behind ops: CARD_ID (else PTL_E_MAGIC; all ones
 * PTL_E_GONE), CLOCK when *clock_hz is 0, CAPTURE_ALL, the copies, ERROR
 * and the program's beat sizes; then the figures (ptl_pg381_compute).
 * Fills everything in g but slot, path, bar and offset.
 */
ptl_err ptl_pg381_read(const ptl_regs_ops *ops, void *opaque, ptl_pg381 *g,
                       ptl_error *err);
/* The figures of g's counters at g->clock_hz. */
void ptl_pg381_compute(ptl_pg381 *g);
/*
 * The generator of a card: the first card the options take whose device
 * tree has a node compatible with PTL_PG381_COMPATIBLE on its endpoint
 * (or -d's card with opts->bar/offset: no tree needed, the clock from
 * CLOCK), its window mapped from the sysfs resource file. The handle
 * has no telemetry block (ptl_handle_block is NULL); its node is the
 * generator's. Errors: those of ptl_open; no such node is PTL_E_NO_NODE
 * naming the card.
 */
ptl_err ptl_pg381_open(const ptl_find_opts *o, ptl_handle **out,
                       ptl_dt_node *node, ptl_error *err);
/* The register accessors of a mapped handle's window. */
const ptl_regs_ops *ptl_handle_regs(ptl_handle *h);
/*
 * The generator's node found in the device tree behind a device-tree
 * VSEC at cap (as ptl_devtree_read reads it); PTL_E_NO_NODE "<name> has
 * no PG381 traffic generator (...)" without one.
 */
ptl_err ptl_pg381_find(const ptl_config_ops *ops, void *opaque,
                       unsigned cap, const char *name, ptl_dt_node *node,
                       ptl_error *err);
/* --pg381's report: text, and JSON {"pg381": {...}} (indent 4). 0 or -1. */
int ptl_pg381_format_text(FILE *f, const ptl_pg381 *g);
int ptl_pg381_format_json(FILE *f, const ptl_pg381 *g);

/* ---------------------------------------------------------------------
 * The port above a card: perf PMUs in sysfs (/sys/bus/event_source/
 * devices/<name>) and those of Synopsys DesignWare root ports that Linux's
 * dwc_pcie_pmu driver registers, named dwc_rootport_<sbdf in hex>. Nothing
 * about a PMU's layout is built in: its type, CPU, format fields and event
 * aliases come from sysfs. With PCIE_TELEMETRY_SYSFS set (a fake tree for
 * tests: the directory that stands for /sys/bus/pci), PMUs are looked for
 * in its parent's event_source/devices, as /sys/bus/event_source/devices
 * stands beside /sys/bus/pci.
 */
#define PTL_PMU_CONFIG_WORDS  4     /* config, config1, config2, config3 */
#define PTL_PMU_MAX_FORMATS   32

/* A format field: "config:0-15" puts the field's value in bits 0..15. */
typedef struct ptl_pmu_format {
    char name[64];
    unsigned word;              /* 0 config, 1 config1, 2 config2, 3 config3 */
    uint64_t mask;              /* its bits, lowest value bit lowest */
} ptl_pmu_format;

typedef struct ptl_pmu {
    char name[64];              /* "dwc_rootport_8" */
    char sysfs[PATH_MAX];       /* its directory */
    char bridge[16];            /* the PCI bridge it counts for, or "" */
    uint32_t type;              /* perf_event_attr.type */
    int cpu;                    /* the first CPU of cpumask (0 without) */
    bool has_cpumask;
    unsigned nformats;
    ptl_pmu_format formats[PTL_PMU_MAX_FORMATS];
} ptl_pmu;

/* An event ready for perf_event_open. */
typedef struct ptl_pmu_event {
    char name[128];             /* as asked for */
    uint64_t config[PTL_PMU_CONFIG_WORDS];
    double scale;               /* events/<name>.scale, else 1 */
    char unit[32];              /* events/<name>.unit, else "" */
} ptl_pmu_event;

/* The directory PMUs are looked for in (see above). */
void ptl_pmu_dir(char *buf, size_t len);
/*
 * One format field from the text of its sysfs file: "config:0-15",
 * "config1:0-31", "config:0-7,32-35", "config2:5". Errors: PTL_E_PMU.
 */
ptl_err ptl_pmu_format_parse(const char *name, const char *text,
                             ptl_pmu_format *f, ptl_error *err);
/*
 * A PMU's directory: its type, cpumask and every format field. name NULL:
 * the directory's last component. Errors: PTL_E_PMU (PTL_E_PERM when a
 * file cannot be read for want of permission).
 */
ptl_err ptl_pmu_load(const char *dir, ptl_pmu *pmu, ptl_error *err);
/*
 * Terms ("eventid=0x20,type=0x0", "lane=3", "edge") encoded into
 * config[] through the PMU's format fields, over what config[] holds (a
 * field given again replaces its bits). A term without a value is 1;
 * config, config1, config2 and config3 set their word whole. Values are
 * decimal or 0x hex and must fit their field. "key=?" (how sysfs marks a
 * term the user must give) is an error naming the term, unless
 * allow_unset, which leaves such a field 0.
 */
ptl_err ptl_pmu_encode(const ptl_pmu *pmu, const char *terms,
                       bool allow_unset,
                       uint64_t config[PTL_PMU_CONFIG_WORDS],
                       ptl_error *err);
/*
 * An event as perf takes it between the slashes of pmu/.../: an alias of
 * the PMU's events directory, perhaps followed by terms that complete or
 * override it ("rx_memory_read,lane=4"), or terms alone
 * ("eventid=0x21,type=0"). An alias is matched exactly, else ignoring
 * case. Errors: PTL_E_PMU.
 */
ptl_err ptl_pmu_event_get(const ptl_pmu *pmu, const char *spec,
                          ptl_pmu_event *ev, ptl_error *err);

/* The PMU name Linux's dwc_pcie_pmu gives the root port domain:bus:devfn. */
void ptl_dwc_pmu_name(unsigned domain, unsigned bus, unsigned devfn,
                      char *buf, size_t len);
/*
 * The DesignWare PMUs above a PCI function: its sysfs device path is
 * resolved (/sys/bus/pci/devices/<BDF> links into /sys/devices/pci0000:00/
 * ...), and for every PCI bridge on that path, nearest first, the PMU
 * dwc_rootport_<id> is loaded if it exists. card: a PCI address
 * ([domain:]bus:dev.fn) or a sysfs device path. *pmus (malloc'd, free()
 * it) and *n >= 1, or PTL_E_PMU "no DesignWare PMU above ..." with what
 * was looked for; PTL_E_NO_CARD when the function is not in sysfs.
 */
ptl_err ptl_dwc_find(const char *card, ptl_pmu **pmus, unsigned *n,
                     ptl_error *err);

/*
 * Counting one event with perf_event_open: system wide on the PMU's CPU
 * (pid -1), not inherited, created disabled, read with the times enabled
 * and running. The PMU must take a CPU-bound counting event (uncore PMUs
 * such as dwc_rootport_* do).
 */
typedef struct ptl_pmu_counter ptl_pmu_counter;

typedef struct ptl_pmu_value {
    uint64_t value;             /* the kernel's count, unscaled */
    uint64_t enabled_ns, running_ns;
} ptl_pmu_value;

/*
 * Errors: PTL_E_PERM (EACCES, EPERM: "needs root or CAP_PERFMON;
 * /proc/sys/kernel/perf_event_paranoid is N"), PTL_E_BUSY (ENOSPC, EBUSY:
 * the PMU's counter is in use), PTL_E_PMU (the PMU is gone or refused
 * the event), PTL_E_INTERNAL.
 */
ptl_err ptl_pmu_counter_open(const ptl_pmu *pmu, const ptl_pmu_event *ev,
                             ptl_pmu_counter **out, ptl_error *err);
ptl_err ptl_pmu_counter_enable(ptl_pmu_counter *c, ptl_error *err);
ptl_err ptl_pmu_counter_disable(ptl_pmu_counter *c, ptl_error *err);
/*
 * The count so far. An event enabled that never ran (its PMU refused to
 * schedule it: the counter is taken by another event) is PTL_E_BUSY.
 */
ptl_err ptl_pmu_counter_read(ptl_pmu_counter *c, ptl_pmu_value *v,
                             ptl_error *err);
void ptl_pmu_counter_close(ptl_pmu_counter *c);
/*
 * The error for errnum from perf_event_open or a later call on the event
 * "pmu/event/", as ptl_pmu_counter_open words it.
 */
ptl_err ptl_pmu_errno_error(const ptl_pmu *pmu, const char *event,
                            int errnum, ptl_error *err);
/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN when unreadable. */
int ptl_perf_paranoid(void);

/* ---------------------------------------------------------------------
 * HiSilicon PCIe Tune and Trace (docs/ptt.md): Linux's hisi_ptt driver
 * registers a perf PMU hisi_ptt<sicl>_<core> per PTT, with the files
 * root_port_filters/<BDF> and requester_filters/<BDF> that name what a
 * trace can be limited to (their content is the value of the event's
 * filter field). A trace is an AUX-area perf event; its data are records
 * of TLP headers, 8DW (32 bytes) or 4DW (16 bytes) each. Discovery and
 * decoding are pure (sysfs reads, arithmetic); the recording is
 * ptl_ptt_trace_* (ptl-ptt-perf.c). PMUs are looked for where
 * ptl_pmu_dir says (PCIE_TELEMETRY_SYSFS for tests).
 */
#define PTL_PTT_PREFIX        "hisi_ptt"
#define PTL_PTT_MAX_FILTERS   256
#define PTL_PTT_8DW_MARK      0xFFFFF800u   /* DW0 of an 8DW record */
#define PTL_PTT_AUX_MIN       (16u << 20)   /* the driver's four 4 MiB buffers */

typedef struct ptl_ptt_filter {
    char name[16];              /* the file's name, "0000:01:00.0" */
    bool requester;             /* requester_filters/, else root_port_filters/ */
    uint32_t value;             /* its content, the event's filter value */
} ptl_ptt_filter;

typedef struct ptl_ptt_pmu {
    ptl_pmu pmu;                /* name, type, cpu, format fields */
    unsigned nfilters;          /* at most PTL_PTT_MAX_FILTERS kept */
    ptl_ptt_filter filters[PTL_PTT_MAX_FILTERS];    /* root ports first */
} ptl_ptt_pmu;

/* One PMU's directory: ptl_pmu_load and its filter files. */
ptl_err ptl_ptt_load(const char *dir, ptl_ptt_pmu *p, ptl_error *err);
/*
 * Every hisi_ptt* PMU of ptl_pmu_dir, in name order: *pmus malloc'd
 * (free()), *n may be 0. Errors: those of ptl_ptt_load.
 */
ptl_err ptl_ptt_list(ptl_ptt_pmu **pmus, unsigned *n, ptl_error *err);
/* The filter of that name and kind, or NULL. */
const ptl_ptt_filter *ptl_ptt_filter_find(const ptl_ptt_pmu *p,
                                          const char *name, bool requester);

/* The PMU and filter that cover a card. */
typedef struct ptl_ptt_target {
    char card[16];              /* "0000:01:00.0" */
    ptl_ptt_pmu pmu;
    ptl_ptt_filter filter;
} ptl_ptt_target;

/*
 * The filter for a card (a PCI address or sysfs path, as
 * ptl_pci_path_get): the requester filter named after the card, in the
 * first PMU that has one (only the card's TLPs); else the root port
 * filter of a bridge on the card's path, nearest first (every TLP through
 * that port). PTL_E_NO_PTT "no hisi_ptt PMU covers ..." saying what was
 * looked for; PTL_E_NO_CARD when the card is not in sysfs.
 */
ptl_err ptl_ptt_find(const char *card, ptl_ptt_target *t, ptl_error *err);

typedef enum ptl_ptt_format { PTL_PTT_4DW, PTL_PTT_8DW } ptl_ptt_format;
typedef enum ptl_ptt_dir { PTL_PTT_IN, PTL_PTT_OUT } ptl_ptt_dir;

/* TLP types of the trace's type field (several may be set) */
#define PTL_PTT_TYPE_POSTED      1u
#define PTL_PTT_TYPE_NONPOSTED   2u
#define PTL_PTT_TYPE_COMPLETION  4u
#define PTL_PTT_TYPE_ALL         7u

/*
 * The direction field for a direction, relative to the root port: 4DW
 * in 0, out 1; 8DW out 1, in 2 (posted, non-posted and class B
 * completions: 8DW traces the class A completions, the answers to the
 * host's own reads, only with 3, alone).
 */
unsigned ptl_ptt_direction_code(ptl_ptt_dir dir, ptl_ptt_format format);
/*
 * config[] of a trace: filter, direction, type and format (0 4DW, 1 8DW)
 * through the PMU's format fields of those names. Errors: PTL_E_PMU.
 */
ptl_err ptl_ptt_encode(const ptl_pmu *pmu, uint32_t filter,
                       unsigned direction, unsigned type,
                       ptl_ptt_format format,
                       uint64_t config[PTL_PMU_CONFIG_WORDS],
                       ptl_error *err);

/* What a TLP is, by the Fmt and Type of its header (PCIe base spec). */
typedef enum ptl_tlp_kind {
    PTL_TLP_MRD, PTL_TLP_MRDLK, PTL_TLP_MWR, PTL_TLP_IORD, PTL_TLP_IOWR,
    PTL_TLP_CFGRD, PTL_TLP_CFGWR, PTL_TLP_MSG, PTL_TLP_MSGD,
    PTL_TLP_CPL, PTL_TLP_CPLD, PTL_TLP_CPLLK, PTL_TLP_CPLDLK,
    PTL_TLP_ATOMIC, PTL_TLP_OTHER,
    PTL_TLP_NKINDS,
} ptl_tlp_kind;

/* "MRd", "MWr", "CplD", ...; "other" */
const char *ptl_tlp_kind_name(ptl_tlp_kind k);
/* fmt: the 3-bit Fmt (only bits 1:0 matter), type: the 5-bit Type */
ptl_tlp_kind ptl_tlp_kind_of(unsigned fmt, unsigned type);

/* One record, decoded. */
typedef struct ptl_ptt_record {
    ptl_ptt_format format;
    bool valid;                 /* 8DW: DW0 had the mark */
    uint32_t prefix;            /* 8DW: DW1 */
    uint32_t time;              /* 8DW: DW7; 4DW: DW0 [31:21] (11 bits) */
    /*
     * The header DW0-3. 4DW records carry DW0 only as fields: it is
     * rebuilt from them (Fmt, Type, T9, T8, TH, RO = !SO, Length; TC, the
     * other attributes, TD, EP, AT are 0).
     */
    uint32_t header[4];
    unsigned fmt, type;         /* Fmt (4DW: bits 1:0 only), Type */
    bool t9, t8, th, so;        /* so: Relaxed Ordering clear (4DW only) */
    unsigned length;            /* the Length field, 0..1023 */
    ptl_tlp_kind kind;
    bool has_data;              /* Fmt bit 1 */
    unsigned payload_dw;        /* has_data: length, 0 meaning 1024; else 0 */
    uint16_t requester;         /* requests DW1 [31:16], completions DW2 */
    uint16_t completer;         /* completions: DW1 [31:16]; else 0 */
} ptl_ptt_record;

/* Bytes of a record in a format: 16 or 32. */
size_t ptl_ptt_record_size(ptl_ptt_format format);
/* 8DW when the first DW (little endian) has the mark (bits 31:11 set) */
ptl_ptt_format ptl_ptt_guess_format(const uint8_t *p, size_t len);
/* Decodes one record of p (ptl_ptt_record_size bytes, little endian). */
void ptl_ptt_decode(const uint8_t *p, ptl_ptt_format format,
                    ptl_ptt_record *r);

/* Sums of one trace: one direction, TLPs and bytes by kind and requester */
#define PTL_PTT_MAX_REQUESTERS 64

typedef struct ptl_ptt_kind_sum {
    uint64_t tlps;
    uint64_t payload_bytes;     /* data TLPs: their payload */
    uint64_t requested_bytes;   /* read requests: the length asked for */
} ptl_ptt_kind_sum;

typedef struct ptl_ptt_requester_sum {
    uint16_t id;                /* bus [15:8], device [7:3], function [2:0] */
    uint64_t tlps, payload_bytes;
} ptl_ptt_requester_sum;

typedef struct ptl_ptt_sums {
    ptl_ptt_format format;
    ptl_ptt_dir dir;
    uint64_t records;
    uint64_t invalid;           /* 8DW records without the mark: not summed */
    uint64_t bytes;             /* every byte fed */
    uint64_t tail;              /* bytes of a last incomplete record */
    ptl_ptt_kind_sum kinds[PTL_TLP_NKINDS];
    ptl_ptt_kind_sum total;
    unsigned nrequesters;       /* in order of appearance */
    ptl_ptt_requester_sum requesters[PTL_PTT_MAX_REQUESTERS];
    ptl_ptt_requester_sum other_requesters;  /* past the first 64 */
    uint8_t carry[32];          /* the start of a record split by a feed */
    /* 8DW records' times (ns from the trace's start, 32 bits, unwrapped) */
    bool timed;
    uint64_t time_first, time_last;
    uint32_t time_raw;
} ptl_ptt_sums;

void ptl_ptt_sums_init(ptl_ptt_sums *s, ptl_ptt_format format,
                       ptl_ptt_dir dir);
/* One decoded record added (an invalid one only counted as such). */
void ptl_ptt_sums_add(ptl_ptt_sums *s, const ptl_ptt_record *r);
/*
 * Trace data as it comes, in pieces of any size: records split between
 * two pieces are put together; s->tail is what waits for the rest.
 */
void ptl_ptt_sums_feed(ptl_ptt_sums *s, const void *data, size_t len);

/* What the report says besides the sums (all may be empty / 0). */
typedef struct ptl_ptt_info {
    const char *pmu;            /* "hisi_ptt2_1", NULL: not recorded */
    const char *card;           /* "0000:01:00.0" */
    const ptl_ptt_filter *filter;
    double seconds;             /* <= 0: unknown (a saved file) */
    uint64_t truncated;         /* AUX records flagged truncated */
    uint64_t partial;           /* AUX records flagged partial */
} ptl_ptt_info;

/*
 * The report of a trace (see pcie-telemetry(1)): text tables, or JSON
 * {"seconds": S, "ptt": {...}} with indent 4. 0, or -1 with errno.
 */
int ptl_ptt_format_text(FILE *f, const ptl_ptt_sums *s,
                        const ptl_ptt_info *info);
int ptl_ptt_format_json(FILE *f, const ptl_ptt_sums *s,
                        const ptl_ptt_info *info);

/*
 * Recording (ptl-ptt-perf.c): one AUX-area event on the PMU's CPU (pid
 * -1, created disabled, no exclude bits), its ring of 1 + 2^n pages and
 * an AUX area of aux_bytes (rounded up to a power of two pages, at least
 * PTL_PTT_AUX_MIN) mapped PROT_READ|PROT_WRITE. ptl_ptt_trace_drain
 * hands the AUX data that PERF_RECORD_AUX records announced to sink, in
 * order, and gives the space back to the kernel. Errors: PTL_E_PERM
 * (perf_event_paranoid, or the AUX area over perf_event_mlock_kb),
 * PTL_E_BUSY (EBUSY: the PTT traces for another event; it takes one at a
 * time), PTL_E_PMU (the PMU gone or refusing the event), PTL_E_INTERNAL.
 */
typedef struct ptl_ptt_trace ptl_ptt_trace;
typedef int (*ptl_ptt_sink)(void *opaque, const void *data, size_t len);

ptl_err ptl_ptt_trace_open(const ptl_pmu *pmu,
                           const uint64_t config[PTL_PMU_CONFIG_WORDS],
                           size_t aux_bytes, ptl_ptt_trace **out,
                           ptl_error *err);
ptl_err ptl_ptt_trace_enable(ptl_ptt_trace *t, ptl_error *err);
ptl_err ptl_ptt_trace_disable(ptl_ptt_trace *t, ptl_error *err);
/* sink returning non-zero stops the drain: PTL_E_INTERNAL with errno */
ptl_err ptl_ptt_trace_drain(ptl_ptt_trace *t, ptl_ptt_sink sink,
                            void *opaque, ptl_error *err);
/* AUX records flagged truncated (data lost) and partial so far */
void ptl_ptt_trace_flags(const ptl_ptt_trace *t, uint64_t *truncated,
                         uint64_t *partial);
void ptl_ptt_trace_close(ptl_ptt_trace *t);

/*
 * A file that `perf record` wrote (ptl-perf-data.c), e.g. of
 * `perf record -e hisi_ptt2_1/.../`: the payloads of its
 * PERF_RECORD_AUXTRACE records, the trace data, handed to sink in file
 * order, read forward only (a file, or perf's pipe mode on a pipe).
 * ptl_perf_data_magic tells such a file by its first 8 bytes. Errors:
 * PTL_E_USAGE (not such a file, or cut short: the message names the
 * byte), PTL_E_INTERNAL (a read error, or sink returned non-zero).
 */
typedef struct ptl_perf_data_info {
    uint64_t auxtrace_records;  /* PERF_RECORD_AUXTRACE */
    uint64_t aux_bytes;         /* their payload */
    uint64_t aux_truncated;     /* PERF_RECORD_AUX flagged truncated */
    uint64_t aux_partial;       /* ... flagged partial */
    uint32_t auxtrace_type;     /* of PERF_RECORD_AUXTRACE_INFO; 0 none */
    uint64_t pmu_type;          /* its priv[0] (hisi_ptt: the PMU's type) */
} ptl_perf_data_info;

bool ptl_perf_data_magic(const void *head, size_t len);
/* head: the first head_len bytes of the file, already read from f */
ptl_err ptl_perf_data_aux(FILE *f, const void *head, size_t head_len,
                          const char *name, ptl_ptt_sink sink, void *opaque,
                          ptl_perf_data_info *info, ptl_error *err);

/* ---------------------------------------------------------------------
 * Configuration space of one PCI function through libpci (sysfs access,
 * as the scan reads it), for what is read and written after the scan.
 */
typedef struct ptl_config ptl_config;

/*
 * slot: "0000:01:00.0". Checks the sysfs config file first, as the scan
 * does: not readable beyond its first 64 bytes (not root) is PTL_E_PERM
 * "reading the configuration space of ... needs root (CAP_SYS_ADMIN)",
 * with writable not writable PTL_E_PERM "writing ..."; not in sysfs
 * PTL_E_NO_CARD. A function without extended configuration space
 * (conventional PCI) opens, and reads beyond 0x100 fail.
 */
ptl_err ptl_config_open(const char *slot, bool writable, ptl_config **out,
                        ptl_error *err);
void ptl_config_close(ptl_config *c);
/* The accessors, opaque the ptl_config. */
const ptl_config_ops *ptl_config_get_ops(void);

/*
 * The PCI functions from one up to the root complex: the function itself,
 * then every PCI bridge above it on its resolved sysfs path (a switch's
 * downstream and upstream ports, the root port), nearest first, as
 * ptl_dwc_find walks them. card: a PCI address or a sysfs device path.
 */
#define PTL_PCI_PATH_MAX 32

typedef struct ptl_pci_path {
    unsigned n;                 /* >= 1: [0] is the function itself */
    char slot[PTL_PCI_PATH_MAX][16];
} ptl_pci_path;

ptl_err ptl_pci_path_get(const char *card, ptl_pci_path *path,
                         ptl_error *err);

/* ---------------------------------------------------------------------
 * PCIe 6 flit mode (docs/flit.md): the PCI Express capability's flit bits
 * and the extended capabilities 0x0031 Physical Layer 64.0 GT/s, 0x0032
 * Flit Logging and 0x0033 Flit Performance Measurement of a link end
 * (pcie-telemetry-flit.h has their registers). The decode functions take
 * raw register values and touch nothing else; ptl_flit_meas_* read and
 * measure one function through any ptl_config_ops; ptl_flit_run_* do it
 * for a card and the ports above it through libpci.
 */
typedef enum ptl_flit_cap {
    PTL_FLIT_CAP_64GT,          /* 0x0031 */
    PTL_FLIT_CAP_LOG,           /* 0x0032 */
    PTL_FLIT_CAP_PERF,          /* 0x0033 */
    PTL_FLIT_NCAPS,
} ptl_flit_cap;

/* Flit mode of a function and where its capabilities are. */
typedef struct ptl_flit_mode {
    bool pcie;                  /* it has a PCI Express capability */
    bool supported;             /* Flit Mode Supported (Capabilities [15]) */
    bool disable;               /* Flit Mode Disable (Link Control [13]) */
    bool active;                /* Flit Mode Status (Link Status 2 [10]) */
    unsigned cap[PTL_FLIT_NCAPS];   /* their offsets, 0 when absent */
} ptl_flit_mode;

/*
 * The flit bits of PCI Express Capabilities (+0x02), Link Control (+0x10)
 * and Link Status 2 (+0x32); sets pcie and leaves cap[] alone.
 */
void ptl_flit_mode_decode(uint16_t flags, uint16_t lnkctl, uint16_t lnksta2,
                          ptl_flit_mode *m);
/* Flit mode supported, or any of the three capabilities. */
bool ptl_flit_mode_any(const ptl_flit_mode *m);
/* The extended capability ID of a ptl_flit_cap (0x0031 ...). */
unsigned ptl_flit_cap_id(ptl_flit_cap cap);
/* Lanes of a link width code (x1 0, x2 1, x4 2, x8 3, x16 4); 0 else. */
unsigned ptl_flit_width(unsigned code);

/* 0x0031 Status (+0x0C): the equalization bits. */
typedef struct ptl_flit_64gt {
    uint32_t status;
    bool eq_complete, eq_phase1, eq_phase2, eq_phase3, eq_request;
} ptl_flit_64gt;

void ptl_flit_64gt_decode(uint32_t status, ptl_flit_64gt *s);

/* 0x0032 Flit Error Log 1 and 2: the oldest logged flit error. */
typedef struct ptl_flit_log_entry {
    uint32_t log1, log2;
    bool valid;
    unsigned width_code, width; /* width 0: a reserved code */
    unsigned offset;
    unsigned consecutive;       /* flits in error after it (count - 1) */
    bool more, unrecognized, uncorrectable;
    unsigned syndrome;          /* log 1 [31:16] */
} ptl_flit_log_entry;

void ptl_flit_log_decode(uint32_t log1, uint32_t log2, ptl_flit_log_entry *e);

/* 0x0032 Flit Error Counter Control (+0x0C) and Status (+0x0E). */
typedef struct ptl_flit_err_counter {
    uint16_t control, status;
    bool enabled, int_enable;
    unsigned events;            /* PTL_FLOG_EVENTS_* */
    unsigned trigger;
    unsigned width_code, width; /* when the counter started */
    bool interrupt;             /* interrupt generated */
    unsigned count;
} ptl_flit_err_counter;

void ptl_flit_err_counter_decode(uint16_t control, uint16_t status,
                                 ptl_flit_err_counter *c);
/* "all flit errors", "uncorrectable and unrecognized", "correctable", "none" */
const char *ptl_flit_events_text(unsigned events);

/* 0x0032 FBER Measurement Control (+0x10). */
typedef struct ptl_flit_fber_ctl {
    uint32_t control;
    bool enabled;
    unsigned granularity;
} ptl_flit_fber_ctl;

void ptl_flit_fber_ctl_decode(uint32_t control, ptl_flit_fber_ctl *f);

/* An FBER measurement over an interval. */
typedef struct ptl_flit_fber {
    bool measured;
    bool cleared;               /* was off: enabled with Clear by the tool */
    double seconds;             /* from the start to the end reading */
    uint64_t flits;             /* the Flit Counter's advance */
    double flits_per_s;
    uint32_t invalid;
    bool invalid_saturated;     /* it stood at 65535: at least that many */
    unsigned nlanes;            /* shown: the link's width, else 16 */
    uint32_t lane[PTL_FLOG_LANES];
    bool lane_saturated[PTL_FLOG_LANES];
} ptl_flit_fber;

/* end - start of the 32-bit Flit Counter, modulo 2^32. */
uint32_t ptl_flit_counter_diff(uint32_t start, uint32_t end);
/*
 * The Flit Counter read again: *total grows by its advance since *last
 * (modulo 2^32), *last becomes now. Read at least once per 2^32 flits
 * (8.6 s at x16), the total is exact over any interval.
 */
void ptl_flit_counter_add(uint64_t *total, uint32_t *last, uint32_t now);
/*
 * A 16-bit counter that stops at 65535 (invalid flits, a lane's
 * correctable errors): end - start, or end when it went back (cleared
 * since); *saturated when end is 65535 (the true count may be more).
 */
uint32_t ptl_flit_count16_diff(uint32_t start, uint32_t end,
                               bool *saturated);

/* 0x0033 Status (+0x0C) and every LTSSM register (+0x10 + 4i). */
typedef struct ptl_flit_perf_status {
    uint32_t raw;
    unsigned status;            /* PTL_FST_* */
    unsigned tracked;           /* flits (LTSSM: transitions) tracked */
    bool interrupt;
    unsigned counter;           /* units of 8 ns (LTSSM: 64 us) */
} ptl_flit_perf_status;

void ptl_flit_perf_status_decode(uint32_t v, ptl_flit_perf_status *s);
/* "not started", "started", "done", "overflow" */
const char *ptl_flit_status_text(unsigned status);

/* 0x0033 Control (+0x08). */
typedef struct ptl_flit_perf_ctl {
    uint32_t control;
    bool enabled;
    unsigned type;              /* one-hot: PTL_FPERF_TYPE_* */
    unsigned instances, threshold;
    unsigned trackers;          /* bit k: the tracker of Control bit 14 + k */
    unsigned ltssm_instances, ltssm_threshold, l1_threshold;
} ptl_flit_perf_ctl;

void ptl_flit_perf_ctl_decode(uint32_t v, ptl_flit_perf_ctl *c);
/*
 * The Control the tool writes for its Flit->Ack measurement over one found:
 * type 001b, instances, Enable as asked; no threshold (no interrupt), no
 * tracker (no LTSSM register is reset); the RsvdP bits as found.
 */
uint32_t ptl_flit_perf_ctl_run(uint32_t found, unsigned instances,
                               bool enable);
/* "L0->Recovery", "L0p upconfiguration", "L1.0->L0", "L1.1->L0", "L1.2->L0" */
const char *ptl_flit_tracker_name(unsigned k);
/*
 * The tracker (k of Control bit 14 + k) that LTSSM register i belongs to:
 * the i-th enabled one; -1 when fewer are enabled.
 */
int ptl_flit_ltssm_tracker(unsigned trackers, unsigned i);

/* A Flit->Ack latency measurement read from its Status. */
typedef struct ptl_flit_latency {
    bool measured;              /* false: not run, skipped says why */
    char skipped[128];
    unsigned instances;         /* 0: the worst case */
    ptl_flit_perf_status st;
    double counter_ns;          /* counter x 8; NAN: not started, overflow */
    double average_ns;          /* counter x 8 / tracked (instances > 0) */
    double worst_ns;            /* counter x 8 (instances 0) */
} ptl_flit_latency;

/* What a Status read at the end says (sets measured). */
void ptl_flit_latency_compute(uint32_t status, unsigned instances,
                              ptl_flit_latency *l);

typedef struct ptl_flit_perf {
    uint32_t capability;
    unsigned vector;            /* interrupt message number */
    unsigned nltssm;            /* LTSSM Tracking Register Count */
    ptl_flit_perf_ctl found;    /* Control as found */
    ptl_flit_latency latency;
    ptl_flit_perf_status ltssm[PTL_FPERF_LTSSM_MAX];
} ptl_flit_perf;

/* One function: what ptl_flit_meas_end last read of it. */
typedef struct ptl_flit_dev {
    char slot[16];
    bool card;                  /* the card; else a port above it */
    ptl_link link;
    ptl_flit_mode mode;
    ptl_flit_64gt pl64;
    ptl_flit_log_entry log;
    ptl_flit_err_counter counter;
    ptl_flit_fber_ctl fber_found;   /* FBER Measurement Control as found */
    ptl_flit_fber fber;
    ptl_flit_perf perf;
} ptl_flit_dev;

typedef struct ptl_flit_meas ptl_flit_meas;

/*
 * Finds the PCI Express capability and the flit capabilities of the
 * function behind ops (the standard and the extended capability lists)
 * and reads its link and flit bits: reads only. A function reading all
 * ones is PTL_E_GONE. instances: those of the Flit->Ack measurement (0
 * the worst case, at most 31).
 */
ptl_err ptl_flit_meas_new(const ptl_config_ops *ops, void *opaque,
                          const char *slot, bool card, unsigned instances,
                          ptl_flit_meas **out, ptl_error *err);
const ptl_flit_dev *ptl_flit_meas_dev(const ptl_flit_meas *m);
/*
 * An interval starts (now_ns: a monotonic clock). The first start notes
 * FBER Measurement Control and the Performance Control as found. FBER
 * found off: written Enable | Clear (granularity kept), again at every
 * start; found on: not written, counted by difference. Performance
 * Measurement found off: Control written with Enable 0, then with Enable
 * 1 (ptl_flit_perf_ctl_run), again at every start; found on (another
 * measurement): not written, not measured.
 */
ptl_err ptl_flit_meas_start(ptl_flit_meas *m, uint64_t now_ns,
                            ptl_error *err);
/* Reads the Flit Counter (within every 2^32 flits). */
ptl_err ptl_flit_meas_poll(ptl_flit_meas *m, ptl_error *err);
/*
 * The interval ends: every register read and decoded (Status before any
 * write), the measurements worked out. Capabilities gone: PTL_E_GONE.
 */
ptl_err ptl_flit_meas_end(ptl_flit_meas *m, uint64_t now_ns,
                          ptl_error *err);
/*
 * Writes back what start changed: FBER Measurement Control and the
 * Performance Control as found (both with Enable 0: the counters and the
 * Status hold their values). Nothing when nothing was written.
 */
ptl_err ptl_flit_meas_restore(ptl_flit_meas *m, ptl_error *err);
void ptl_flit_meas_free(ptl_flit_meas *m);

/*
 * A card and every port above it that has flit mode or a flit capability
 * (ptl_pci_path_get, ptl_config_open, ptl_flit_meas_new); a port whose
 * configuration space is not in sysfs is left out. writable for a
 * measurement. Errors: those of ptl_config_open and ptl_pci_path_get.
 */
typedef struct ptl_flit_run ptl_flit_run;

ptl_err ptl_flit_run_open(const char *card, unsigned instances,
                          bool writable, ptl_flit_run **out, ptl_error *err);
/*
 * PTL_E_NO_FLIT unless one of them runs its link in flit mode, with a
 * message that says what was found.
 */
ptl_err ptl_flit_run_check(const ptl_flit_run *r, ptl_error *err);
/* The functions, the card first; as of the last ptl_flit_run_end. */
const ptl_flit_dev *ptl_flit_run_devs(const ptl_flit_run *r, unsigned *n);
ptl_err ptl_flit_run_start(ptl_flit_run *r, ptl_error *err);
ptl_err ptl_flit_run_poll(ptl_flit_run *r, ptl_error *err);
/* *seconds: from the first start to the end of this interval's */
ptl_err ptl_flit_run_end(ptl_flit_run *r, double *seconds, ptl_error *err);
/* ptl_flit_meas_restore of each; the first error. */
ptl_err ptl_flit_run_restore(ptl_flit_run *r, ptl_error *err);
/* Frees, restoring first (errors ignored: call ptl_flit_run_restore). */
void ptl_flit_run_close(ptl_flit_run *r);

/*
 * --list's line of a function with flit mode or a flit capability, after
 * indent: "flit card 0000:01:00.0: supported, active; 0x0031 at 0x200,
 * 0x0032 at 0x220, 0x0033 at 0x260". 0 or -1 with errno.
 */
int ptl_flit_format_list(FILE *f, const ptl_flit_dev *d, const char *indent);
/*
 * --flit's report of the functions over seconds (see pcie-telemetry(1)),
 * text and JSON ({"seconds": S, "flit": [...]}, indent 4). 0 or -1.
 */
int ptl_flit_format_text(FILE *f, const ptl_flit_dev *devs, unsigned n,
                         double seconds);
int ptl_flit_format_json(FILE *f, const ptl_flit_dev *devs, unsigned n,
                         double seconds);

const char *ptl_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
