/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hisi_ptt trace reader without the device: records of both formats
 * made by hand from the layout of docs/ptt.md and decoded field by field,
 * the TLP kinds by Fmt and Type, the sums (also fed in pieces that split
 * records), the config through the PMU's format files, discovery and the
 * filter choice on a sysfs tree laid out as Linux lays it out, the report
 * in text and JSON, --ptt's command line, and with PTT_TOOL the tool on
 * that tree (exit 14, the refused event) and on a saved trace.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "pcie-telemetry.h"
#include "options.h"
#include "test-sysfs-support.h"

static char *top;       /* the fake /: <top>/sys/... */
static char *sys;       /* <top>/sys */

/* ------------------------------------------------------------ records */

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

/* A 4DW record: DW0 as given, header DW1-3. */
static void rec4(uint8_t *p, uint32_t dw0, uint32_t h1, uint32_t h2,
                 uint32_t h3)
{
    put_le32(p, dw0);
    put_le32(p + 4, h1);
    put_le32(p + 8, h2);
    put_le32(p + 12, h3);
}

/* An 8DW record: the mark, prefix, header DW0-3, 0, time. */
static void rec8(uint8_t *p, uint32_t mark, const uint32_t h[4],
                 uint32_t time)
{
    put_le32(p, mark);
    put_le32(p + 4, 0);
    for (int i = 0; i < 4; i++) {
        put_le32(p + 8 + 4 * i, h[i]);
    }
    put_le32(p + 24, 0);
    put_le32(p + 28, time);
}

static void test_decode_4dw(void)
{
    uint8_t b[16];
    ptl_ptt_record r;

    /*
     * MWr64 of 1 DW, Relaxed Ordering clear, time 5: header DW0
     * 0x60000001 gives Fmt 3 | SO 1 << 10 | Length 1 << 11 | 5 << 21
     */
    g_assert_cmpuint(0x3 | 1u << 10 | 1u << 11 | 5u << 21, ==, 0x00A00C03);
    rec4(b, 0x00A00C03, 0x0100000F, 0x00000001, 0x23456780);
    ptl_ptt_decode(b, PTL_PTT_4DW, &r);
    g_assert_true(r.valid);
    g_assert_cmpuint(r.fmt, ==, 3);
    g_assert_cmpuint(r.type, ==, 0);
    g_assert_false(r.t9 || r.t8 || r.th);
    g_assert_true(r.so);
    g_assert_cmpuint(r.length, ==, 1);
    g_assert_cmpuint(r.time, ==, 5);
    g_assert_cmphex(r.header[0], ==, 0x60000001);
    g_assert_cmphex(r.header[1], ==, 0x0100000F);
    g_assert_cmphex(r.header[2], ==, 0x00000001);
    g_assert_cmphex(r.header[3], ==, 0x23456780);
    g_assert_cmpint(r.kind, ==, PTL_TLP_MWR);
    g_assert_true(r.has_data);
    g_assert_cmpuint(r.payload_dw, ==, 1);
    g_assert_cmphex(r.requester, ==, 0x0100);
    g_assert_cmphex(r.completer, ==, 0);

    /*
     * MRd32 of 1024 DW (Length 0) with Relaxed Ordering (header bit 13),
     * time 2047: 0x00002000 gives Fmt 0, Type 0, SO 0, Length 0,
     * 0x7FF << 21
     */
    rec4(b, 0xFFE00000, 0x020800FF, 0xFE000000, 0);
    ptl_ptt_decode(b, PTL_PTT_4DW, &r);
    g_assert_cmpuint(r.fmt, ==, 0);
    g_assert_false(r.so);
    g_assert_cmpuint(r.length, ==, 0);
    g_assert_cmpuint(r.time, ==, 0x7FF);
    g_assert_cmphex(r.header[0], ==, 0x00002000);
    g_assert_cmpint(r.kind, ==, PTL_TLP_MRD);
    g_assert_false(r.has_data);
    g_assert_cmpuint(r.payload_dw, ==, 0);
    g_assert_cmphex(r.requester, ==, 0x0208);

    /*
     * CplD of 32 DW from 00:00.0 to 01:00.0, time 3: header DW0
     * 0x4A000020 gives Fmt 2 | Type 0x0A << 2 | SO 1 << 10 | 32 << 11 |
     * 3 << 21
     */
    g_assert_cmphex(2 | 0x0A << 2 | 1u << 10 | 32u << 11 | 3u << 21, ==,
                    0x0061042A);
    rec4(b, 0x0061042A, 0x00000080, 0x01000500, 0);
    ptl_ptt_decode(b, PTL_PTT_4DW, &r);
    g_assert_cmpuint(r.fmt, ==, 2);
    g_assert_cmpuint(r.type, ==, 0x0A);
    g_assert_cmpuint(r.length, ==, 32);
    g_assert_cmpuint(r.time, ==, 3);
    g_assert_cmphex(r.header[0], ==, 0x4A000020);
    g_assert_cmpint(r.kind, ==, PTL_TLP_CPLD);
    g_assert_cmpuint(r.payload_dw, ==, 32);
    g_assert_cmphex(r.requester, ==, 0x0100);
    g_assert_cmphex(r.completer, ==, 0x0000);

    /*
     * MWr32 of 4 DW with T9 (bit 23), T8 (19) and TH (16): header DW0
     * 0x40890004 gives 2 | T9 1 << 7 | T8 1 << 8 | TH 1 << 9 | SO 1 << 10
     * | 4 << 11
     */
    rec4(b, 0x2782, 0x01000000, 0x1000, 0);
    ptl_ptt_decode(b, PTL_PTT_4DW, &r);
    g_assert_true(r.t9 && r.t8 && r.th && r.so);
    g_assert_cmpuint(r.length, ==, 4);
    g_assert_cmphex(r.header[0], ==, 0x40890004);
    g_assert_cmpint(r.kind, ==, PTL_TLP_MWR);
}

static void test_decode_8dw(void)
{
    static const uint32_t cpl[4] = { 0x0A000000, 0x00000004, 0x02080000, 0 };
    static const uint32_t mwr[4] = { 0x600023FF, 0x01000AFF, 0x1, 0x2000 };
    uint8_t b[32];
    ptl_ptt_record r;

    /* Cpl (no data) from 00:00.0 to 02:01.0 at 0x12345678 ns */
    rec8(b, PTL_PTT_8DW_MARK, cpl, 0x12345678);
    ptl_ptt_decode(b, PTL_PTT_8DW, &r);
    g_assert_true(r.valid);
    g_assert_cmphex(r.prefix, ==, 0);
    g_assert_cmphex(r.time, ==, 0x12345678);
    for (int i = 0; i < 4; i++) {
        g_assert_cmphex(r.header[i], ==, cpl[i]);
    }
    g_assert_cmpuint(r.fmt, ==, 0);
    g_assert_cmpuint(r.type, ==, 0x0A);
    g_assert_cmpint(r.kind, ==, PTL_TLP_CPL);
    g_assert_false(r.has_data);
    g_assert_cmpuint(r.payload_dw, ==, 0);
    g_assert_cmphex(r.requester, ==, 0x0208);
    g_assert_cmphex(r.completer, ==, 0x0000);

    /* MWr64 of 1023 DW with Relaxed Ordering, from 01:00.0 */
    rec8(b, PTL_PTT_8DW_MARK, mwr, 7);
    ptl_ptt_decode(b, PTL_PTT_8DW, &r);
    g_assert_cmpuint(r.fmt, ==, 3);
    g_assert_false(r.so);
    g_assert_cmpuint(r.length, ==, 1023);
    g_assert_cmpint(r.kind, ==, PTL_TLP_MWR);
    g_assert_cmpuint(r.payload_dw, ==, 1023);
    g_assert_cmphex(r.requester, ==, 0x0100);

    /* without the mark: not a record */
    rec8(b, 0x60000001, mwr, 7);
    ptl_ptt_decode(b, PTL_PTT_8DW, &r);
    g_assert_false(r.valid);

    /* the format told apart by the mark, as perf does */
    rec8(b, PTL_PTT_8DW_MARK, mwr, 7);
    g_assert_cmpint(ptl_ptt_guess_format(b, 32), ==, PTL_PTT_8DW);
    put_le32(b, 0xFFFFF800 | 0x7FF);        /* other low bits: still 8DW */
    g_assert_cmpint(ptl_ptt_guess_format(b, 32), ==, PTL_PTT_8DW);
    rec4(b, 0x00A00C03, 0, 0, 0);
    g_assert_cmpint(ptl_ptt_guess_format(b, 16), ==, PTL_PTT_4DW);
    g_assert_cmpint(ptl_ptt_guess_format(b, 0), ==, PTL_PTT_4DW);
    g_assert_cmpuint(ptl_ptt_record_size(PTL_PTT_4DW), ==, 16);
    g_assert_cmpuint(ptl_ptt_record_size(PTL_PTT_8DW), ==, 32);
}

static void test_kinds(void)
{
    static const struct {
        unsigned fmt, type;
        ptl_tlp_kind kind;
        const char *name;
    } cases[] = {
        { 0, 0x00, PTL_TLP_MRD, "MRd" }, { 1, 0x00, PTL_TLP_MRD, "MRd" },
        { 2, 0x00, PTL_TLP_MWR, "MWr" }, { 3, 0x00, PTL_TLP_MWR, "MWr" },
        { 0, 0x01, PTL_TLP_MRDLK, "MRdLk" },
        { 0, 0x02, PTL_TLP_IORD, "IORd" }, { 2, 0x02, PTL_TLP_IOWR, "IOWr" },
        { 0, 0x04, PTL_TLP_CFGRD, "CfgRd" },
        { 2, 0x05, PTL_TLP_CFGWR, "CfgWr" },
        { 1, 0x10, PTL_TLP_MSG, "Msg" }, { 3, 0x14, PTL_TLP_MSGD, "MsgD" },
        { 0, 0x0A, PTL_TLP_CPL, "Cpl" }, { 2, 0x0A, PTL_TLP_CPLD, "CplD" },
        { 0, 0x0B, PTL_TLP_CPLLK, "CplLk" },
        { 2, 0x0B, PTL_TLP_CPLDLK, "CplDLk" },
        { 2, 0x0C, PTL_TLP_ATOMIC, "AtomicOp" },
        { 3, 0x0E, PTL_TLP_ATOMIC, "AtomicOp" },
        { 4, 0x00, PTL_TLP_OTHER, "other" },   /* a TLP prefix */
        { 0, 0x1B, PTL_TLP_OTHER, "other" },
        { 0, 0x0C, PTL_TLP_OTHER, "other" },   /* an atomic without data */
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        ptl_tlp_kind k = ptl_tlp_kind_of(cases[i].fmt, cases[i].type);

        g_assert_cmpint(k, ==, cases[i].kind);
        g_assert_cmpstr(ptl_tlp_kind_name(k), ==, cases[i].name);
    }
    g_assert_cmpstr(ptl_tlp_kind_name(PTL_TLP_NKINDS), ==, "other");
}

/*
 * 3 MWr of 1 DW and 1 MRd of 1024 DW from 01:00.0, 2 CplD of 32 DW to
 * it, 1 MWr of 2 DW from 02:00.0: 4DW records.
 */
static size_t make_trace(uint8_t *b)
{
    size_t n = 0;

    for (int i = 0; i < 3; i++, n += 16) {
        rec4(b + n, 0x00A00C03, 0x0100000F, 0, 0x1000 * i);
    }
    rec4(b + n, 0xFFE00000, 0x010000FF, 0xFE000000, 0);
    n += 16;
    for (int i = 0; i < 2; i++, n += 16) {
        rec4(b + n, 0x0061042A, 0x00000080, 0x01000500, 0);
    }
    rec4(b + n, 0x00001402, 0x0200000F, 0x80, 0);   /* MWr32, 2 DW */
    return n + 16;
}

static void check_sums(const ptl_ptt_sums *s)
{
    g_assert_cmpuint(s->records, ==, 7);
    g_assert_cmpuint(s->bytes, ==, 112);
    g_assert_cmpuint(s->invalid, ==, 0);
    g_assert_cmpuint(s->tail, ==, 0);
    g_assert_cmpuint(s->kinds[PTL_TLP_MWR].tlps, ==, 4);
    g_assert_cmpuint(s->kinds[PTL_TLP_MWR].payload_bytes, ==, 12 + 8);
    g_assert_cmpuint(s->kinds[PTL_TLP_MWR].requested_bytes, ==, 0);
    g_assert_cmpuint(s->kinds[PTL_TLP_MRD].tlps, ==, 1);
    g_assert_cmpuint(s->kinds[PTL_TLP_MRD].payload_bytes, ==, 0);
    g_assert_cmpuint(s->kinds[PTL_TLP_MRD].requested_bytes, ==, 4096);
    g_assert_cmpuint(s->kinds[PTL_TLP_CPLD].tlps, ==, 2);
    g_assert_cmpuint(s->kinds[PTL_TLP_CPLD].payload_bytes, ==, 256);
    g_assert_cmpuint(s->kinds[PTL_TLP_CPL].tlps, ==, 0);
    g_assert_cmpuint(s->total.tlps, ==, 7);
    g_assert_cmpuint(s->total.payload_bytes, ==, 276);
    g_assert_cmpuint(s->total.requested_bytes, ==, 4096);
    g_assert_cmpuint(s->nrequesters, ==, 2);
    g_assert_cmphex(s->requesters[0].id, ==, 0x0100);
    g_assert_cmpuint(s->requesters[0].tlps, ==, 6);
    g_assert_cmpuint(s->requesters[0].payload_bytes, ==, 268);
    g_assert_cmphex(s->requesters[1].id, ==, 0x0200);
    g_assert_cmpuint(s->requesters[1].tlps, ==, 1);
    g_assert_cmpuint(s->requesters[1].payload_bytes, ==, 8);
}

static void test_sums(void)
{
    uint8_t b[256];
    size_t n = make_trace(b);
    ptl_ptt_sums *s = g_new0(ptl_ptt_sums, 1);
    static const uint32_t mwr[4] = { 0x40000002, 0x01000000, 0x10, 0 };
    size_t cuts[] = { 1, 7, 8, 3, 30, 16, 47 };
    size_t at = 0;

    ptl_ptt_sums_init(s, PTL_PTT_4DW, PTL_PTT_IN);
    ptl_ptt_sums_feed(s, b, n);
    check_sums(s);
    g_assert_cmpint(s->dir, ==, PTL_PTT_IN);

    /* in pieces that split records: the same sums */
    ptl_ptt_sums_init(s, PTL_PTT_4DW, PTL_PTT_OUT);
    for (unsigned i = 0; i < G_N_ELEMENTS(cuts); i++) {
        ptl_ptt_sums_feed(s, b + at, cuts[i]);
        at += cuts[i];
    }
    g_assert_cmpuint(at, ==, n);
    check_sums(s);

    /* half a record waits for the rest */
    ptl_ptt_sums_feed(s, b, 8);
    g_assert_cmpuint(s->tail, ==, 8);
    g_assert_cmpuint(s->records, ==, 7);

    /* 8DW: a record without the mark is counted, not summed */
    ptl_ptt_sums_init(s, PTL_PTT_8DW, PTL_PTT_IN);
    rec8(b, PTL_PTT_8DW_MARK, mwr, 1);
    rec8(b + 32, 0, mwr, 2);
    ptl_ptt_sums_feed(s, b, 64);
    g_assert_cmpuint(s->records, ==, 2);
    g_assert_cmpuint(s->invalid, ==, 1);
    g_assert_cmpuint(s->total.tlps, ==, 1);
    g_assert_cmpuint(s->kinds[PTL_TLP_MWR].payload_bytes, ==, 8);

    /* past 64 requesters the rest are summed together */
    ptl_ptt_sums_init(s, PTL_PTT_4DW, PTL_PTT_IN);
    for (unsigned i = 0; i < 70; i++) {
        rec4(b, 0x00A00C03, i << 16, 0, 0);
        ptl_ptt_sums_feed(s, b, 16);
    }
    g_assert_cmpuint(s->nrequesters, ==, PTL_PTT_MAX_REQUESTERS);
    g_assert_cmpuint(s->other_requesters.tlps, ==, 6);
    g_assert_cmpuint(s->other_requesters.payload_bytes, ==, 24);
    g_free(s);
}

/* ------------------------------------------------------- perf.data */

static void put_le64(uint8_t *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

/* A record header: type, misc 0, size. */
static size_t rec_header(uint8_t *p, uint32_t type, uint16_t size)
{
    put_le32(p, type);
    p[4] = p[5] = 0;
    p[6] = size & 0xff;
    p[7] = size >> 8;
    return 8;
}

/*
 * A file as perf record writes it (perf's perf.data-file-format.txt), its
 * records built here field by field: an unrelated record, AUXTRACE_INFO
 * (type 6, priv[0] 42), the trace's first 40 bytes in one AUXTRACE record
 * (so a record is split), an AUX record flagged truncated, the rest in a
 * second AUXTRACE record; then bytes past the data section that are not
 * records. pipe: perf's pipe mode (a 16-byte header, records to the end).
 */
static size_t make_perf_data(uint8_t *b, const uint8_t *trace, size_t n,
                             bool pipe)
{
    size_t hsize = pipe ? 16 : 104, start = pipe ? 16 : 104 + 16, k = start;
    const size_t cut = 40;

    memset(b, 0, start);
    memcpy(b, "PERFILE2", 8);
    put_le64(b + 8, hsize);
    k += rec_header(b + k, 3, 24);              /* PERF_RECORD_COMM */
    memset(b + k, 0x5a, 16);
    k += 16;
    k += rec_header(b + k, 70, 24);             /* AUXTRACE_INFO */
    put_le32(b + k, 6);
    put_le32(b + k + 4, 0);
    put_le64(b + k + 8, 42);
    k += 16;
    for (int part = 0; part < 2; part++) {
        size_t len = part == 0 ? cut : n - cut;

        k += rec_header(b + k, 71, 48);         /* AUXTRACE */
        put_le64(b + k, len);
        memset(b + k + 8, 0, 32);
        k += 40;
        memcpy(b + k, trace + (part == 0 ? 0 : cut), len);
        k += len;
        if (part == 0) {
            k += rec_header(b + k, 11, 40);     /* AUX, a sample_id after */
            put_le64(b + k, 0);
            put_le64(b + k + 8, 4096);
            put_le64(b + k + 16, 1);            /* truncated */
            put_le64(b + k + 24, 0);
            k += 32;
        }
    }
    if (!pipe) {
        put_le64(b + 16, 136);                  /* attr_size */
        put_le64(b + 24, 104);                  /* attrs: none */
        put_le64(b + 40, start);                /* data */
        put_le64(b + 48, k - start);
        memset(b + k, 0xee, 24);                /* a feature section */
        k += 24;
    }
    return k;
}

static int sums_sink(void *opaque, const void *data, size_t len)
{
    ptl_ptt_sums_feed(opaque, data, len);
    return 0;
}

static ptl_err read_perf_data(const uint8_t *b, size_t len, size_t head,
                              ptl_ptt_sums *s, ptl_perf_data_info *info,
                              ptl_error *e)
{
    FILE *f = fmemopen((void *)(b + head), len - head, "rb");
    ptl_err r;

    g_assert_nonnull(f);
    ptl_ptt_sums_init(s, PTL_PTT_4DW, PTL_PTT_OUT);
    r = ptl_perf_data_aux(f, b, head, "t.data", sums_sink, s, info, e);
    fclose(f);
    return r;
}

static void test_perf_data(void)
{
    static uint8_t b[2048];
    uint8_t trace[256];
    size_t n = make_trace(trace);

    for (int pipe = 0; pipe < 2; pipe++) {
        size_t len = make_perf_data(b, trace, n, pipe);

        g_assert_true(ptl_perf_data_magic(b, len));
        /* the caller has read none, some or all of the header */
        for (size_t head = 0; head <= 20; head += 10) {
            ptl_ptt_sums s;
            ptl_perf_data_info info;
            ptl_error e = { 0 };

            g_assert_cmpint(read_perf_data(b, len, head, &s, &info, &e), ==,
                            PTL_OK);
            check_sums(&s);
            g_assert_cmpuint(info.auxtrace_records, ==, 2);
            g_assert_cmpuint(info.aux_bytes, ==, n);
            g_assert_cmpuint(info.aux_truncated, ==, 1);
            g_assert_cmpuint(info.aux_partial, ==, 0);
            g_assert_cmpuint(info.auxtrace_type, ==, 6);
            g_assert_cmpuint(info.pmu_type, ==, 42);
        }
    }
    {
        size_t len = make_perf_data(b, trace, n, false);
        ptl_ptt_sums s;
        ptl_perf_data_info info;
        ptl_error e = { 0 };

        /* cut inside the second AUXTRACE record's data */
        g_assert_cmpint(read_perf_data(b, len - 24 - 20, 0, &s, &info, &e),
                        ==, PTL_E_USAGE);
        g_assert_cmpstr(e.msg, ==, "t.data: a perf.data file cut short at "
                        "byte 396");
        /* a record claiming fewer bytes than its header */
        b[120 + 6] = 4;
        g_assert_cmpint(read_perf_data(b, len, 0, &s, &info, &e), ==,
                        PTL_E_USAGE);
        g_assert_cmpstr(e.msg, ==, "t.data: a record of 4 bytes at byte 120");
        memcpy(b, "2ELIFREP", 8);
        g_assert_false(ptl_perf_data_magic(b, len));
        g_assert_cmpint(read_perf_data(b, len, 0, &s, &info, &e), ==,
                        PTL_E_USAGE);
        g_assert_cmpstr(e.msg, ==, "t.data: a perf.data file of the other "
                        "byte order");
        memcpy(b, "PERFILE1", 8);
        g_assert_cmpint(read_perf_data(b, len, 0, &s, &info, &e), ==,
                        PTL_E_USAGE);
        g_assert_cmpstr(e.msg, ==, "t.data: not a perf.data file (no "
                        "PERFILE2 magic)");
    }
}

static void test_direction(void)
{
    g_assert_cmpuint(ptl_ptt_direction_code(PTL_PTT_IN, PTL_PTT_4DW), ==, 0);
    g_assert_cmpuint(ptl_ptt_direction_code(PTL_PTT_OUT, PTL_PTT_4DW), ==, 1);
    g_assert_cmpuint(ptl_ptt_direction_code(PTL_PTT_IN, PTL_PTT_8DW), ==, 2);
    g_assert_cmpuint(ptl_ptt_direction_code(PTL_PTT_OUT, PTL_PTT_8DW), ==, 1);
}

/* ------------------------------------------------------------- sysfs */

/*
 * A PCI function at sys/devices/<path>, linked from bus/pci/devices; a
 * card (the virtual card's ID, so that the tool takes it) when card.
 */
static void add_function(const char *path, bool card)
{
    g_autofree char *dir = g_build_filename(sys, "devices", path, NULL);
    g_autofree char *slot = g_path_get_basename(path);
    g_autofree char *link = g_build_filename(sys, "bus/pci/devices", slot,
                                             NULL);
    g_autofree char *target = g_build_filename("../../../devices", path,
                                               NULL);
    g_autofree uint8_t *config = g_malloc0(4096);
    g_autofree char *cfg = g_build_filename(dir, "config", NULL);

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    g_assert_cmpint(symlink(target, link), ==, 0);
    if (!card) {
        return;
    }
    tsys_put_text(dir, "vendor", "0x1234\n");
    tsys_put_text(dir, "device", "0x0d7b\n");
    tsys_put_text(dir, "class", "0x020000\n");
    tsys_put_text(dir, "irq", "0\n");
    tsys_put_text(dir, "resource", "0x00000000fe000000 0x00000000fe00ffff "
        "0x0000000000040200\n");
    config[0] = 0x34;
    config[1] = 0x12;
    config[2] = 0x7b;
    config[3] = 0x0d;
    g_assert_true(g_file_set_contents(cfg, (char *)config, 4096, NULL));
}

/*
 * A PMU as hisi_ptt registers it: the format of the 6.12 driver, and
 * filter files "root_port_filters/<BDF>" and "requester_filters/<BDF>"
 * given as NULL-terminated name, value pairs.
 */
static void add_ptt(const char *name, const char *type, const char *cpumask,
                    const char *const *ports, const char *const *reqs)
{
    g_autofree char *real = g_build_filename(sys, "devices/pci0000:00/"
                                             "0000:00:08.0", name, NULL);
    g_autofree char *fmt = g_build_filename(real, "format", NULL);
    g_autofree char *rp = g_build_filename(real, "root_port_filters", NULL);
    g_autofree char *rq = g_build_filename(real, "requester_filters", NULL);
    g_autofree char *link = g_build_filename(sys, "bus/event_source/devices",
                                             name, NULL);
    g_autofree char *t = g_strdup_printf("%s\n", type);
    g_autofree char *c = g_strdup_printf("%s\n", cpumask);

    g_assert_cmpint(g_mkdir_with_parents(fmt, 0755), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(rp, 0755), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(rq, 0755), ==, 0);
    tsys_put_text(real, "type", t);
    tsys_put_text(real, "cpumask", c);
    tsys_put_text(fmt, "filter", "config:0-19\n");
    tsys_put_text(fmt, "direction", "config:20-23\n");
    tsys_put_text(fmt, "type", "config:24-31\n");
    tsys_put_text(fmt, "format", "config:32-35\n");
    for (; ports && *ports; ports += 2) {
        tsys_put_text(rp, ports[0], ports[1]);
    }
    for (; reqs && *reqs; reqs += 2) {
        tsys_put_text(rq, reqs[0], reqs[1]);
    }
    g_assert_cmpint(symlink(real, link), ==, 0);
}

static void setup(void)
{
    g_autofree char *pci = NULL;
    g_autofree char *d = NULL;
    static const char *const ports2[] = {
        "0000:00:10.0", "0x80001\n", "0000:00:11.0", "0x80004\n", NULL,
    };
    static const char *const reqs2[] = { "0000:01:00.0", "0x00100\n", NULL };
    static const char *const reqs3[] = { "0000:08:00.0", "0x00800\n", NULL };

    top = g_dir_make_tmp("ptl-ptt-XXXXXX", NULL);
    g_assert_nonnull(top);
    sys = g_build_filename(top, "sys", NULL);
    pci = g_build_filename(sys, "bus/pci", NULL);
    d = g_build_filename(sys, "bus/pci/devices", NULL);
    g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
    g_free(d);
    d = g_build_filename(sys, "bus/event_source/devices", NULL);
    g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
    g_setenv("PCIE_TELEMETRY_SYSFS", pci, TRUE);

    add_function("pci0000:00/0000:00:08.0", false);     /* the PTT */
    /* 01:00.0 below root port 00:10.0: a requester filter of its own */
    add_function("pci0000:00/0000:00:10.0", false);
    add_function("pci0000:00/0000:00:10.0/0000:01:00.0", true);
    /* 06:00.0 behind a switch below 00:11.0: the root port's filter */
    add_function("pci0000:00/0000:00:11.0", false);
    add_function("pci0000:00/0000:00:11.0/0000:04:00.0", false);
    add_function("pci0000:00/0000:00:11.0/0000:04:00.0/0000:05:01.0",
                 false);
    add_function("pci0000:00/0000:00:11.0/0000:04:00.0/0000:05:01.0/"
                 "0000:06:00.0", true);
    /* 07:00.0 below 00:12.0, which no PTT covers */
    add_function("pci0000:00/0000:00:12.0", false);
    add_function("pci0000:00/0000:00:12.0/0000:07:00.0", true);
    /* 08:00.0 below 00:13.0: a requester filter of the second PTT */
    add_function("pci0000:00/0000:00:13.0", false);
    add_function("pci0000:00/0000:00:13.0/0000:08:00.0", true);
    add_ptt("hisi_ptt3_0", "61000", "8-15", NULL, reqs3);
    add_ptt("hisi_ptt2_1", "60000", "0-3", ports2, reqs2);
}

static void test_list(void)
{
    ptl_ptt_pmu *pmus;
    unsigned n;
    ptl_error e = { 0 };
    const ptl_ptt_filter *f;

    g_assert_cmpint(ptl_ptt_list(&pmus, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpstr(pmus[0].pmu.name, ==, "hisi_ptt2_1");
    g_assert_cmpuint(pmus[0].pmu.type, ==, 60000);
    g_assert_cmpint(pmus[0].pmu.cpu, ==, 0);
    g_assert_cmpuint(pmus[0].pmu.nformats, ==, 4);
    /* root ports first, by name */
    g_assert_cmpuint(pmus[0].nfilters, ==, 3);
    g_assert_cmpstr(pmus[0].filters[0].name, ==, "0000:00:10.0");
    g_assert_false(pmus[0].filters[0].requester);
    g_assert_cmphex(pmus[0].filters[0].value, ==, 0x80001);
    g_assert_cmpstr(pmus[0].filters[1].name, ==, "0000:00:11.0");
    g_assert_cmphex(pmus[0].filters[1].value, ==, 0x80004);
    g_assert_cmpstr(pmus[0].filters[2].name, ==, "0000:01:00.0");
    g_assert_true(pmus[0].filters[2].requester);
    g_assert_cmphex(pmus[0].filters[2].value, ==, 0x100);
    f = ptl_ptt_filter_find(&pmus[0], "0000:01:00.0", true);
    g_assert_true(f == &pmus[0].filters[2]);
    g_assert_null(ptl_ptt_filter_find(&pmus[0], "0000:01:00.0", false));
    g_assert_cmpstr(pmus[1].pmu.name, ==, "hisi_ptt3_0");
    g_assert_cmpint(pmus[1].pmu.cpu, ==, 8);
    g_assert_cmpuint(pmus[1].nfilters, ==, 1);
    free(pmus);
}

static void test_find(void)
{
    static const struct {
        const char *card, *pmu, *filter;
        bool requester;
        uint32_t value;
    } cases[] = {
        { "0000:01:00.0", "hisi_ptt2_1", "0000:01:00.0", true, 0x100 },
        { "01:00.0", "hisi_ptt2_1", "0000:01:00.0", true, 0x100 },
        { "0000:06:00.0", "hisi_ptt2_1", "0000:00:11.0", false, 0x80004 },
        { "0000:08:00.0", "hisi_ptt3_0", "0000:08:00.0", true, 0x800 },
    };
    ptl_ptt_target *t = g_new0(ptl_ptt_target, 1);
    ptl_error e = { 0 };

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_assert_cmpint(ptl_ptt_find(cases[i].card, t, &e), ==, PTL_OK);
        g_assert_cmpstr(t->pmu.pmu.name, ==, cases[i].pmu);
        g_assert_cmpstr(t->filter.name, ==, cases[i].filter);
        g_assert_cmpint(t->filter.requester, ==, cases[i].requester);
        g_assert_cmphex(t->filter.value, ==, cases[i].value);
    }
    g_assert_cmpstr(t->card, ==, "0000:08:00.0");

    g_assert_cmpint(ptl_ptt_find("0000:07:00.0", t, &e), ==, PTL_E_NO_PTT);
    g_assert_true(g_str_has_prefix(e.msg, "no hisi_ptt PMU covers "
                                   "0000:07:00.0 (no requester filter "
                                   "0000:07:00.0, no root port filter of "
                                   "0000:00:12.0 and no root port filter "
                                   "above it in "));
    g_assert_cmpint(ptl_ptt_find("0000:09:00.0", t, &e), ==, PTL_E_NO_CARD);
    g_free(t);
}

static void test_find_none(void)
{
    g_autofree char *empty = g_build_filename(top, "empty", NULL);
    g_autofree char *pci = g_build_filename(empty, "bus/pci", NULL);
    g_autofree char *real = g_build_filename(sys, "bus/pci", NULL);
    g_autofree char *devs = g_build_filename(pci, "devices", NULL);
    g_autofree char *link = g_build_filename(devs, "0000:01:00.0", NULL);
    g_autofree char *target = g_build_filename(sys, "devices/pci0000:00/"
                                               "0000:00:10.0/0000:01:00.0",
                                               NULL);
    ptl_ptt_target *t = g_new0(ptl_ptt_target, 1);
    ptl_ptt_pmu *pmus;
    unsigned n;
    ptl_error e = { 0 };

    /* a tree without event_source: no PMU at all */
    g_assert_cmpint(g_mkdir_with_parents(devs, 0755), ==, 0);
    g_assert_cmpint(symlink(target, link), ==, 0);
    g_setenv("PCIE_TELEMETRY_SYSFS", pci, TRUE);
    g_assert_cmpint(ptl_ptt_list(&pmus, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 0);
    free(pmus);
    g_assert_cmpint(ptl_ptt_find("0000:01:00.0", t, &e), ==, PTL_E_NO_PTT);
    g_assert_true(g_str_has_prefix(e.msg, "no hisi_ptt PMU covers "
                                   "0000:01:00.0 (there is no hisi_ptt* PMU "
                                   "in "));
    g_assert_true(g_str_has_suffix(e.msg, "is hisi_ptt loaded?)"));
    g_setenv("PCIE_TELEMETRY_SYSFS", real, TRUE);
    g_free(t);
}

static void test_load_errors(void)
{
    g_autofree char *dir = g_build_filename(top, "bad/hisi_ptt9_9", NULL);
    g_autofree char *rq = g_build_filename(dir, "requester_filters", NULL);
    ptl_ptt_pmu *p = g_new0(ptl_ptt_pmu, 1);
    ptl_error e = { 0 };

    g_assert_cmpint(g_mkdir_with_parents(rq, 0755), ==, 0);
    tsys_put_text(dir, "type", "12\n");
    tsys_put_text(rq, "0000:01:00.0", "zz\n");
    tsys_put_text(rq, "not-a-bdf", "0x1\n");         /* not a filter: left alone */
    g_assert_cmpint(ptl_ptt_load(dir, p, &e), ==, PTL_E_PMU);
    g_assert_true(g_str_has_prefix(e.msg, "cannot read the filter "));
    g_assert_true(g_str_has_suffix(e.msg, "0000:01:00.0: not a hex number"));
    tsys_put_text(rq, "0000:01:00.0", "0x00100\n");
    g_assert_cmpint(ptl_ptt_load(dir, p, &e), ==, PTL_OK);
    g_assert_cmpuint(p->nfilters, ==, 1);
    g_assert_cmpuint(p->pmu.nformats, ==, 0);
    g_free(p);
}

static void test_encode(void)
{
    ptl_ptt_target *t = g_new0(ptl_ptt_target, 1);
    uint64_t config[PTL_PMU_CONFIG_WORDS];
    ptl_pmu *pmu;
    ptl_error e = { 0 };

    g_assert_cmpint(ptl_ptt_find("0000:01:00.0", t, &e), ==, PTL_OK);
    pmu = &t->pmu.pmu;
    /* filter | direction << 20 | type << 24 | format << 32 */
    g_assert_cmpint(ptl_ptt_encode(pmu, 0x80001, 1, 7, PTL_PTT_8DW, config,
                                   &e), ==, PTL_OK);
    g_assert_cmphex(config[0], ==, 0x107180001ull);
    g_assert_cmphex(config[1] | config[2] | config[3], ==, 0);
    g_assert_cmpint(ptl_ptt_encode(pmu, 0x100, 0, 4, PTL_PTT_4DW, config,
                                   &e), ==, PTL_OK);
    g_assert_cmphex(config[0], ==, 0x04000100ull);
    /* the fields where the format files put them, not where we think */
    pmu->formats[0].mask = 0xFull << 40;    /* direction (sorted first) */
    g_assert_cmpstr(pmu->formats[0].name, ==, "direction");
    g_assert_cmpint(ptl_ptt_encode(pmu, 0x100, 3, 4, PTL_PTT_4DW, config,
                                   &e), ==, PTL_OK);
    g_assert_cmphex(config[0], ==, 0x30004000100ull);
    /* a value too wide, a field missing */
    g_assert_cmpint(ptl_ptt_encode(pmu, 0x100000, 0, 4, PTL_PTT_4DW, config,
                                   &e), ==, PTL_E_PMU);
    g_assert_true(strstr(e.msg, "does not fit") != NULL);
    pmu->nformats = 3;                      /* no "type" */
    g_assert_cmpint(ptl_ptt_encode(pmu, 0x100, 0, 4, PTL_PTT_4DW, config,
                                   &e), ==, PTL_E_PMU);
    g_assert_true(strstr(e.msg, "has no format field 'type'") != NULL);
    g_free(t);
}

/* ------------------------------------------------------------ output */

static char *format(bool json, const ptl_ptt_sums *s, const ptl_ptt_info *i)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    g_assert_nonnull(f);
    g_assert_cmpint(json ? ptl_ptt_format_json(f, s, i)
                         : ptl_ptt_format_text(f, s, i), ==, 0);
    fclose(f);
    return buf;
}

static void test_output(void)
{
    uint8_t b[256];
    ptl_ptt_sums *s = g_new0(ptl_ptt_sums, 1);
    ptl_ptt_filter filt = { "0000:01:00.0", true, 0x100 };
    ptl_ptt_info info = { "hisi_ptt2_1", "0000:01:00.0", &filt, 0.5, 0, 0 };
    g_autofree char *text = NULL, *json = NULL;
    ptl_json *doc = NULL;
    const ptl_json *p, *k;
    ptl_error e = { 0 };

    ptl_ptt_sums_init(s, PTL_PTT_4DW, PTL_PTT_IN);
    ptl_ptt_sums_feed(s, b, make_trace(b));
    text = format(false, s, &info);
    g_assert_true(g_str_has_prefix(text, "PTT trace hisi_ptt2_1 of "
                                   "0000:01:00.0, requester filter "
                                   "0000:01:00.0 (0x00100)\n"));
    g_assert_true(strstr(text, "Direction in (into the root port), 4DW "
                         "records: 7 records, 112 bytes in 0.50 s\n"));
    g_assert_true(strstr(text, "\nMWr                    4                "
                         "20                 0\n"));
    g_assert_true(strstr(text, "\nMRd                    1                 "
                         "0              4096\n"));
    g_assert_true(strstr(text, "\nCplD                   2               "
                         "256                 0\n"));
    g_assert_true(strstr(text, "\ntotal                  7               "
                         "276              4096\n"));
    g_assert_true(strstr(text, "\n01:00.0                6               "
                         "268\n"));
    g_assert_true(strstr(text, "\n02:00.0                1                 "
                         "8\n"));
    g_assert_null(strstr(text, "Warning"));

    json = format(true, s, &info);
    g_assert_cmpint(ptl_json_parse(json, strlen(json), 0, 0, NULL, &doc, &e),
                    ==, PTL_OK);
    g_assert_cmpfloat(ptl_json_get(doc, "seconds")->number, ==, 0.5);
    p = ptl_json_get(doc, "ptt");
    g_assert_cmpstr(ptl_json_get(p, "pmu")->string, ==, "hisi_ptt2_1");
    g_assert_cmpstr(ptl_json_get(p, "direction")->string, ==, "in");
    g_assert_cmpstr(ptl_json_get(p, "format")->string, ==, "4dw");
    g_assert_cmpuint(ptl_json_get(p, "records")->uint, ==, 7);
    g_assert_cmpstr(ptl_json_get(ptl_json_get(p, "filter"), "kind")->string,
                    ==, "requester");
    g_assert_cmpuint(ptl_json_get(ptl_json_get(p, "filter"), "value")->uint,
                     ==, 0x100);
    k = ptl_json_get(p, "kinds");
    g_assert_cmpuint(k->n, ==, 3);
    g_assert_cmpstr(ptl_json_get(&k->items[0], "kind")->string, ==, "MRd");
    g_assert_cmpuint(ptl_json_get(&k->items[0], "requested_bytes")->uint,
                     ==, 4096);
    g_assert_cmpstr(ptl_json_get(&k->items[2], "kind")->string, ==, "CplD");
    g_assert_cmpuint(ptl_json_get(ptl_json_get(p, "total"),
                                  "payload_bytes")->uint, ==, 276);
    k = ptl_json_get(p, "requesters");
    g_assert_cmpuint(k->n, ==, 2);
    g_assert_cmpstr(ptl_json_get(&k->items[1], "id")->string, ==, "02:00.0");
    ptl_json_free(doc);

    /* nothing recorded, saved: nulls and empty lists, still JSON */
    ptl_ptt_sums_init(s, PTL_PTT_8DW, PTL_PTT_OUT);
    memset(&info, 0, sizeof(info));
    info.truncated = 2;
    g_free(json);
    json = format(true, s, &info);
    g_assert_cmpint(ptl_json_parse(json, strlen(json), 0, 0, NULL, &doc, &e),
                    ==, PTL_OK);
    g_assert_cmpint(ptl_json_get(doc, "seconds")->type, ==, PTL_JSON_NULL);
    p = ptl_json_get(doc, "ptt");
    g_assert_cmpint(ptl_json_get(p, "pmu")->type, ==, PTL_JSON_NULL);
    g_assert_cmpuint(ptl_json_get(p, "kinds")->n, ==, 0);
    g_assert_cmpuint(ptl_json_get(p, "truncated")->uint, ==, 2);
    ptl_json_free(doc);
    g_free(text);
    text = format(false, s, &info);
    g_assert_true(g_str_has_prefix(text, "PTT trace (saved)\n"));
    g_assert_true(strstr(text, "Direction out (out of the root port), 8DW "));
    g_assert_true(strstr(text, "2 AUX chunks truncated"));
    g_free(s);
}

/* ----------------------------------------------------------- options */

static int parse(ptt_opts *o, char *msg, const char *line)
{
    g_auto(GStrv) words = NULL;
    g_autofree char *cmd = g_strconcat("pcie-telemetry ", line, NULL);
    int argc;

    g_assert_true(g_shell_parse_argv(cmd, &argc, &words, NULL));
    return ptt_parse_options(argc, words, o, msg, 256);
}

static void test_options(void)
{
    static const struct {
        const char *line, *msg;
    } bad[] = {
        { "--ptt sideways", "--ptt: 'sideways' is not in or out" },
        { "--ptt", "--ptt needs an argument" },
        { "--ptt in --ptt-format 16dw", "--ptt-format: '16dw' is not 4dw "
          "or 8dw" },
        { "--ptt-format 8dw", "--ptt-format goes with --ptt only" },
        { "--ptt-raw f", "--ptt-raw goes with --ptt only" },
        { "--ptt-input f", "--ptt-input goes with --ptt only" },
        { "--ptt in --ptt-raw ''", "--ptt-raw: empty file name" },
        { "--ptt in -w", "-w does not go with --ptt" },
        { "--ptt in -c", "-c does not go with --ptt" },
        { "--ptt in --list", "--list does not go with --ptt" },
        { "--ptt in --port rx", "--port does not go with --ptt" },
        { "--ptt in --flit", "--flit does not go with --ptt" },
        { "--ptt in --csv", "--csv does not go with --ptt" },
        { "--ptt in --prometheus", "--prometheus does not go with --ptt" },
        { "--ptt in --live", "--live does not go with --ptt" },
        { "--ptt in -i 1", "-i does not go with --ptt" },
        { "--ptt in -t 0", "--ptt needs an interval above 0 (the trace runs "
          "over the tool's interval)" },
        { "--ptt in --ptt-input f -d 01:00.0", "-d does not go with "
          "--ptt-input (which traces nothing)" },
        { "--ptt in --ptt-input f -t 2", "-t does not go with --ptt-input "
          "(which traces nothing)" },
        { "--ptt in --ptt-input f --ptt-raw g", "--ptt-raw does not go with "
          "--ptt-input (which traces nothing)" },
        { "--input x --ptt in", "--ptt does not go with --input (which reads "
          "no card)" },
    };
    ptt_opts o;
    char msg[256];
    GString *help = g_string_new(NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    g_assert_cmpint(parse(&o, msg, ""), ==, 0);
    g_assert_cmpint(o.ptt, ==, PTT_TRACE_NONE);
    g_assert_cmpint(parse(&o, msg, "--ptt in"), ==, 0);
    g_assert_cmpint(o.ptt, ==, PTT_TRACE_IN);
    g_assert_false(o.ptt_8dw);
    g_assert_null(o.ptt_raw);
    g_assert_cmpfloat(o.interval, ==, 1.0);
    g_assert_cmpint(parse(&o, msg, "--ptt out --ptt-format 8dw --ptt-raw "
                          "t.bin -j -t 0.5 -d 01:00.0"), ==, 0);
    g_assert_cmpint(o.ptt, ==, PTT_TRACE_OUT);
    g_assert_true(o.ptt_8dw && o.ptt_format_given);
    g_assert_nonnull(o.ptt_raw);
    g_assert_cmpint(o.format, ==, PTT_JSON);
    g_assert_cmpfloat(o.interval, ==, 0.5);
    g_assert_cmpint(parse(&o, msg, "--ptt in --ptt-format 4dw --ptt-input "
                          "-"), ==, 0);
    g_assert_false(o.ptt_8dw);
    g_assert_nonnull(o.ptt_input);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_cmpint(parse(&o, msg, bad[i].line), ==, 2);
        g_assert_cmpstr(msg, ==, bad[i].msg);
    }
    f = open_memstream(&buf, &len);
    ptt_print_help(f);
    fclose(f);
    g_string_append(help, buf);
    free(buf);
    g_assert_true(strstr(help->str, "      --ptt DIR ") != NULL);
    g_assert_true(strstr(help->str, "      --ptt-format F ") != NULL);
    g_assert_true(strstr(help->str, "      --ptt-raw FILE ") != NULL);
    g_assert_true(strstr(help->str, "  14  no hisi_ptt PMU covers the card "
                         "(--ptt)\n") != NULL);
    g_string_free(help, TRUE);
}

/* -------------------------------------------------------------- tool */

static void test_tool(void)
{
    g_autofree char *file = g_build_filename(top, "trace.bin", NULL);
    uint8_t b[256];
    size_t n = make_trace(b);
    char *out = NULL, *err = NULL;
    int rc;

    if (!tsys_have_tool()) {
        return;
    }
    {
        const char *args[] = { "--ptt", "in", "-d", "07:00.0", NULL };

        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 14);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_prefix(err, "pcie-telemetry: no hisi_ptt "
                                       "PMU covers 0000:07:00.0 (no "
                                       "requester filter 0000:07:00.0"));
        g_free(out);
        g_free(err);
    }
    {
        /*
         * the tree's PMU type is nobody's: the kernel refuses the event
         * (ENOENT, 12), or perf_event_open is not for us here (4)
         */
        const char *args[] = { "--ptt", "in", "-d", "01:00.0", "-t", "0.01",
                               NULL };

        rc = tsys_run_tool(args, &out, &err);
        g_assert_true(rc == 12 || rc == 4);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_prefix(err, rc == 12
                                       ? "pcie-telemetry: hisi_ptt2_1: no "
                                         "such PMU or its CPU is gone"
                                       : "pcie-telemetry: tracing with "
                                         "hisi_ptt2_1 was refused"));
        g_free(out);
        g_free(err);
    }
    /* a saved trace read back */
    g_assert_true(g_file_set_contents(file, (char *)b, n, NULL));
    {
        const char *args[] = { "--ptt", "out", "--ptt-input", file, "-j",
                               NULL };
        ptl_json *doc = NULL;
        ptl_error e = { 0 };
        const ptl_json *p;

        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 0);
        g_assert_cmpstr(err, ==, "");
        g_assert_cmpint(ptl_json_parse(out, strlen(out), 0, 0, NULL, &doc,
                                       &e), ==, PTL_OK);
        p = ptl_json_get(doc, "ptt");
        g_assert_cmpstr(ptl_json_get(p, "direction")->string, ==, "out");
        g_assert_cmpstr(ptl_json_get(p, "format")->string, ==, "4dw");
        g_assert_cmpuint(ptl_json_get(ptl_json_get(p, "total"),
                                      "tlps")->uint, ==, 7);
        ptl_json_free(doc);
        g_free(out);
        g_free(err);
    }
    /* the same records in a file perf record wrote */
    {
        static uint8_t pd[2048];
        size_t len = make_perf_data(pd, b, n, false);
        const char *args[] = { "--ptt", "out", "--ptt-input", file, NULL };

        g_assert_true(g_file_set_contents(file, (char *)pd, len, NULL));
        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 0);
        g_assert_cmpstr(err, ==, "");
        g_assert_nonnull(strstr(out, "MWr"));
        g_assert_true(g_regex_match_simple("^total +7 ", out,
                                           G_REGEX_MULTILINE, 0));
        g_free(out);
        g_free(err);
        /* cut short: the byte named, exit 2 */
        g_assert_true(g_file_set_contents(file, (char *)pd, 300, NULL));
        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 2);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_suffix(err, "trace.bin: a perf.data file "
                                       "cut short at byte 300\n"));
        g_free(out);
        g_free(err);
    }
    {
        const char *args[] = { "--ptt", "in", "--ptt-input", "/nonexistent",
                               NULL };

        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 2);
        g_assert_cmpstr(err, ==, "pcie-telemetry: /nonexistent: No such "
                        "file or directory\n");
        g_free(out);
        g_free(err);
    }
}

int main(int argc, char **argv)
{
    int r;

    g_test_init(&argc, &argv, NULL);
    setup();
    g_test_add_func("/ptl-ptt/decode-4dw", test_decode_4dw);
    g_test_add_func("/ptl-ptt/decode-8dw", test_decode_8dw);
    g_test_add_func("/ptl-ptt/kinds", test_kinds);
    g_test_add_func("/ptl-ptt/sums", test_sums);
    g_test_add_func("/ptl-ptt/direction", test_direction);
    g_test_add_func("/ptl-ptt/perf-data", test_perf_data);
    g_test_add_func("/ptl-ptt/list", test_list);
    g_test_add_func("/ptl-ptt/find", test_find);
    g_test_add_func("/ptl-ptt/find-none", test_find_none);
    g_test_add_func("/ptl-ptt/load-errors", test_load_errors);
    g_test_add_func("/ptl-ptt/encode", test_encode);
    g_test_add_func("/ptl-ptt/output", test_output);
    g_test_add_func("/ptl-ptt/options", test_options);
    g_test_add_func("/ptl-ptt/tool", test_tool);
    r = g_test_run();
    tsys_rm_rf(top);
    g_free(top);
    g_free(sys);
    return r;
}
