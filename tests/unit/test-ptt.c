/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HiSilicon PTT model (qemu-device/hisi-ptt/ptt-core.c): the hisi_ptt
 * driver's sequences (tune read and write with the clamp, the trace's
 * idle wait, reset drain, start and stop with WR_STS), records of both
 * formats field by field in the layout perf's decoder reads, the filters,
 * buffer rotation with its status bits and interrupts, buffers not
 * drained, the byte budget, a write to no memory, and migration. The
 * expected words are worked out here from docs/ptt.md.
 */
#include <glib.h>
#include <string.h>

#include "ptt-core.h"

#define MEM_BASE    0x100000u
#define MEM_SIZE    0x10000u

/* A TLP source of a list, guest memory of an array, counted interrupts */
typedef struct Env {
    PttTlp tlp[512];
    size_t n;
    uint8_t mem[MEM_SIZE];
    unsigned irqs;
    size_t count_calls;
} Env;

static size_t env_tlps(void *opaque, uint64_t from, uint64_t to,
                       PttTlp *out, size_t max, uint64_t *resume)
{
    Env *e = opaque;
    size_t k = 0;

    *resume = to;
    for (size_t i = 0; i < e->n; i++) {
        if (e->tlp[i].tlp.t_ns < from || e->tlp[i].tlp.t_ns >= to) {
            continue;
        }
        if (!out) {
            k++;
            continue;
        }
        if (k == max) {
            *resume = e->tlp[i].tlp.t_ns;
            return k;
        }
        out[k++] = e->tlp[i];
    }
    if (!out) {
        e->count_calls++;
    }
    return k;
}

static bool env_dma(void *opaque, uint64_t addr, const void *buf,
                    size_t len)
{
    Env *e = opaque;

    if (addr < MEM_BASE || addr + len > MEM_BASE + MEM_SIZE) {
        return false;
    }
    memcpy(e->mem + (addr - MEM_BASE), buf, len);
    return true;
}

static void env_irq(void *opaque)
{
    ((Env *)opaque)->irqs++;
}

static PttConfig cfg_default(void)
{
    PttConfig c = {
        .sicl_id = 2, .core_id = 1, .range_lower = 0x0008,
        .range_upper = 0x0018, .max_bytes_per_s = 1ull << 40,
    };
    return c;
}

static uint32_t mem32(Env *e, uint32_t addr)
{
    uint32_t v;

    memcpy(&v, e->mem + (addr - MEM_BASE), 4);
    return v;
}

/* An MWr with a 64-bit address from function 01:00.0 below port id 0 */
static PttTlp mwr64(uint64_t t)
{
    PttTlp x = {
        .tlp = { .t_ns = t,
                 .hdr = { 0x60000001, 0x01000f1e, 0x00000004, 0x02810040 },
                 .up = true, .type = PTT_TYPE_P },
        .port = 0, .function = 0x0100,
    };
    return x;
}

/* The driver's trace start: idle, reset drain, buffers, enable */
static void start(PttCore *s, uint32_t size, uint32_t ctrl, uint64_t now)
{
    g_assert_cmphex(ptt_read(s, PTT_TRACE_STS, now) & 1, ==, 1);
    ptt_write(s, PTT_TRACE_CTRL, PTT_CTRL_RST, now);
    g_assert_cmphex(ptt_read(s, PTT_TRACE_WR_STS, now), ==, 0);
    ptt_write(s, PTT_TRACE_CTRL, 0, now);
    for (unsigned i = 0; i < PTT_BUFS; i++) {
        ptt_write(s, PTT_TRACE_ADDR_LO(i), MEM_BASE + i * size, now);
        ptt_write(s, PTT_TRACE_ADDR_HI(i), 0, now);
    }
    ptt_write(s, PTT_TRACE_ADDR_SIZE, size, now);
    ptt_write(s, PTT_TRACE_INT_STAT, 0xF, now);
    ptt_write(s, PTT_TRACE_INT_MASK, 0, now);
    ptt_write(s, PTT_TRACE_CTRL, ctrl | PTT_CTRL_EN, now);
    g_assert_cmphex(ptt_read(s, PTT_TRACE_STS, now) & 1, ==, 0);
}

#define CTRL_PORT0_P_IN (PTT_TYPE_P << PTT_CTRL_TYPE_SHIFT | \
                         1u << PTT_CTRL_TARGET_SHIFT)

static void test_identity_and_tune(void)
{
    PttConfig c = cfg_default();
    PttCore s;
    Env e = { 0 };

    ptt_init(&s, &c, env_tlps, env_dma, env_irq, &e);
    g_assert_cmphex(ptt_read(&s, PTT_LOCATION, 0), ==, 0x00020001);
    g_assert_cmphex(ptt_read(&s, PTT_DEVICE_RANGE, 0), ==, 0x00180008);
    ptt_write(&s, PTT_LOCATION, 0, 0);
    g_assert_cmphex(ptt_read(&s, PTT_LOCATION, 0), ==, 0x00020001);
    /* the driver: code into TUNING_CTRL, a read request, poll, data */
    for (unsigned i = 0; i < PTT_TUNE_EVENTS; i++) {
        ptt_write(&s, PTT_TUNING_CTRL, ptt_tune_codes[i], 0);
        ptt_write(&s, PTT_TUNING_DATA, PTT_TUNING_READ, 0);
        g_assert_cmphex(ptt_read(&s, PTT_TUNING_INT_STAT, 0) & 1, ==, 0);
        g_assert_cmphex(ptt_read(&s, PTT_TUNING_DATA, 0) & 0xFFFF, ==, 1);
    }
    /* writes: 0 and 2 taken, anything above 2 taken as 2 */
    static const struct {
        uint32_t val, want;
    } w[] = { { 0, 0 }, { 2, 2 }, { 3, 2 }, { 0xFFFF, 2 }, { 1, 1 } };
    for (unsigned k = 0; k < G_N_ELEMENTS(w); k++) {
        ptt_write(&s, PTT_TUNING_CTRL, ptt_tune_codes[2], 0);
        ptt_write(&s, PTT_TUNING_DATA, w[k].val, 0);
        ptt_write(&s, PTT_TUNING_DATA, PTT_TUNING_READ, 0);
        g_assert_cmphex(ptt_read(&s, PTT_TUNING_DATA, 0) & 0xFFFF, ==,
                        w[k].want);
    }
    /* events keep their own values */
    ptt_write(&s, PTT_TUNING_CTRL, ptt_tune_codes[4], 0);
    ptt_write(&s, PTT_TUNING_DATA, 0, 0);
    ptt_write(&s, PTT_TUNING_CTRL, ptt_tune_codes[3], 0);
    ptt_write(&s, PTT_TUNING_DATA, PTT_TUNING_READ, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TUNING_DATA, 0), ==, 1);
    /* an unknown event reads all ones in its 16 bits */
    ptt_write(&s, PTT_TUNING_CTRL, 0x00080004, 0);
    ptt_write(&s, PTT_TUNING_DATA, PTT_TUNING_READ, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TUNING_DATA, 0), ==, 0xFFFF);
    /* the reset: every event back to 1 */
    ptt_reset(&s);
    ptt_write(&s, PTT_TUNING_CTRL, ptt_tune_codes[4], 0);
    ptt_write(&s, PTT_TUNING_DATA, PTT_TUNING_READ, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TUNING_DATA, 0), ==, 1);
    /* unaligned and out-of-range accesses */
    g_assert_cmphex(ptt_read(&s, PTT_LOCATION + 2, 0), ==, 0);
    g_assert_cmphex(ptt_read(&s, PTT_BAR_SIZE, 0), ==, 0);
}

static void test_encode(void)
{
    PttTlp t = mwr64(0);
    uint32_t r[8];

    /* 8DW: the mark, no prefix, the header, reserved, time */
    g_assert_cmpuint(ptt_encode(&t, true, 0x0004c033, r), ==, 32);
    g_assert_cmphex(r[0], ==, 0xFFFFF800);
    g_assert_cmphex(r[1], ==, 0);
    g_assert_cmphex(r[2], ==, 0x60000001);
    g_assert_cmphex(r[3], ==, 0x01000f1e);
    g_assert_cmphex(r[4], ==, 0x00000004);
    g_assert_cmphex(r[5], ==, 0x02810040);
    g_assert_cmphex(r[6], ==, 0);
    g_assert_cmphex(r[7], ==, 0x0004c033);
    /*
     * 4DW, perf's order: Fmt 011 -> [1:0] 3, Type 0, T9 T8 TH 0, SO 1
     * (Relaxed Ordering clear), Length 1 -> bit 11, time 0x033 -> [31:21]
     */
    g_assert_cmpuint(ptt_encode(&t, false, 0x0004c033, r), ==, 16);
    g_assert_cmphex(r[0], ==, 3u | 1u << 10 | 1u << 11 | 0x033u << 21);
    g_assert_cmphex(r[1], ==, 0x01000f1e);
    g_assert_cmphex(r[2], ==, 0x00000004);
    g_assert_cmphex(r[3], ==, 0x02810040);
    /* a CplD, 3DW: Fmt 010, Type 01010, RO set, T9 T8 TH set, Length 0x3FF */
    t.tlp.hdr[0] = 0x4A000000 | 1u << 23 | 1u << 19 | 1u << 16 | 1u << 13 |
               0x3FF;
    ptt_encode(&t, false, 0x7FF, r);
    g_assert_cmphex(r[0], ==, 2u | 0x0Au << 2 | 1u << 7 | 1u << 8 |
                    1u << 9 | 0x3FFu << 11 | 0x7FFu << 21);
}

static void test_match(void)
{
    PttTlp in_p = mwr64(0), out_cpl = mwr64(0), in_cpl_a = mwr64(0);
    uint32_t c;

    out_cpl.tlp.up = false;
    out_cpl.tlp.type = PTT_TYPE_CPL;
    in_cpl_a.tlp.type = PTT_TYPE_CPL;
    /* port filter: port id 0 is bit 0; port id 4 is bit 4 */
    c = CTRL_PORT0_P_IN;
    g_assert_true(ptt_match(c, &in_p));
    in_p.port = 4;
    g_assert_false(ptt_match(c, &in_p));
    g_assert_true(ptt_match(c | 0x10u << PTT_CTRL_TARGET_SHIFT, &in_p));
    /* requester filter */
    c = PTT_CTRL_REQ_FILTER | PTT_TYPE_P << PTT_CTRL_TYPE_SHIFT |
        0x0100u << PTT_CTRL_TARGET_SHIFT;
    g_assert_true(ptt_match(c, &in_p));
    in_p.function = 0x0101;
    g_assert_false(ptt_match(c, &in_p));
    in_p = mwr64(0);
    /* types */
    g_assert_false(ptt_match(PTT_TYPE_NP << PTT_CTRL_TYPE_SHIFT |
                             1u << PTT_CTRL_TARGET_SHIFT, &in_p));
    /* 4DW directions: 0 in, 1 out, 2 both but inbound CPL A, 3 both
     * with inbound CPL A only */
    c = 7u << PTT_CTRL_TYPE_SHIFT | 1u << PTT_CTRL_TARGET_SHIFT;
    g_assert_true(ptt_match(c, &in_p));
    g_assert_false(ptt_match(c, &out_cpl));
    g_assert_false(ptt_match(c | 1u << 2, &in_p));
    g_assert_true(ptt_match(c | 1u << 2, &out_cpl));
    g_assert_true(ptt_match(c | 2u << 2, &in_p));
    g_assert_false(ptt_match(c | 2u << 2, &in_cpl_a));
    g_assert_true(ptt_match(c | 3u << 2, &in_cpl_a));
    g_assert_false(ptt_match(c | 3u << 2, &in_p));
    g_assert_true(ptt_match(c | 3u << 2, &out_cpl));
    /* 8DW: 0 reserved, 1 out, 2 in but CPL A, 3 in CPL A */
    c |= PTT_CTRL_8DW;
    g_assert_false(ptt_match(c, &in_p));
    g_assert_false(ptt_match(c, &out_cpl));
    g_assert_true(ptt_match(c | 1u << 2, &out_cpl));
    g_assert_false(ptt_match(c | 1u << 2, &in_p));
    g_assert_true(ptt_match(c | 2u << 2, &in_p));
    g_assert_false(ptt_match(c | 2u << 2, &out_cpl));
    g_assert_true(ptt_match(c | 3u << 2, &in_cpl_a));
    in_cpl_a.cpl_b = true;
    g_assert_false(ptt_match(c | 3u << 2, &in_cpl_a));
    g_assert_true(ptt_match(c | 2u << 2, &in_cpl_a));
}

/* 64-byte buffers: 4 records of 4DW each, or 2 of 8DW */
static void test_rotation(void)
{
    PttConfig c = cfg_default();
    PttCore s;
    Env *e = g_new0(Env, 1);

    for (unsigned i = 0; i < 10; i++) {
        e->tlp[i] = mwr64(1000 + 10 * i);
    }
    e->n = 10;
    ptt_init(&s, &c, env_tlps, env_dma, env_irq, e);
    start(&s, 64, CTRL_PORT0_P_IN, 500);
    /* by 1035: 4 TLPs: buffer 0 full, its bit, the interrupt */
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 1035), ==, 1);
    g_assert_cmpuint(e->irqs, ==, 1);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 1035), ==, 0);
    /* the records' times count from the start (500) */
    g_assert_cmphex(mem32(e, MEM_BASE) >> 21, ==, 500);
    g_assert_cmphex(mem32(e, MEM_BASE + 16) >> 21, ==, 510);
    g_assert_cmphex(mem32(e, MEM_BASE + 4), ==, 0x01000f1e);
    /* all 10: buffers 0 and 1 full, 2 records in buffer 2 */
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 5000), ==, 3);
    g_assert_cmpuint(e->irqs, ==, 2);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 5000), ==, 32);
    g_assert_cmphex(mem32(e, MEM_BASE + 128 + 16) >> 21, ==, 590);
    /* the driver's stop: disable, mask, idle; WR_STS stays */
    ptt_write(&s, PTT_TRACE_CTRL, 0, 6000);
    ptt_write(&s, PTT_TRACE_INT_MASK, 0xF, 6000);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_STS, 6000) & 1, ==, 1);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 6000), ==, 32);
    g_assert_cmpuint(s.stats.records, ==, 10);
    g_assert_cmpuint(s.stats.buffers, ==, 2);

    /* buffers not drained: after buffer 3, buffer 0's bit is still set */
    e->n = 0;
    for (unsigned i = 0; i < 40; i++) {
        e->tlp[e->n++] = mwr64(10000 + 10 * i);
    }
    start(&s, 64, CTRL_PORT0_P_IN, 9000);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 10155), ==, 0xF);
    g_assert_cmpuint(s.stats.dropped_busy, ==, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 10205), ==, 0xF);
    g_assert_cmpuint(s.stats.dropped_busy, ==, 5);
    /* drained (W1C of bit 0): writing goes on in buffer 0 */
    ptt_write(&s, PTT_TRACE_INT_STAT, 1, 10205);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 10225), ==, 0xE);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 10225), ==, 32);
    /* masked buffers fill without an interrupt */
    e->irqs = 0;
    ptt_write(&s, PTT_TRACE_INT_MASK, 0xF, 10225);
    ptt_write(&s, PTT_TRACE_INT_STAT, 0xF, 10225);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_INT_STAT, 20000), ==, 0xF);
    g_assert_cmpuint(s.stats.dropped_busy, ==, 5 + 3);
    g_assert_cmpuint(e->irqs, ==, 0);
    g_free(e);
}

static void test_formats_and_filters(void)
{
    PttConfig c = cfg_default();
    PttCore s;
    Env *e = g_new0(Env, 1);

    e->tlp[0] = mwr64(100);
    e->tlp[1] = mwr64(200);
    e->tlp[1].port = 6;                 /* another port: filtered out */
    e->tlp[2] = mwr64(300);
    e->tlp[2].tlp.type = PTT_TYPE_NP;       /* another type */
    e->tlp[3] = mwr64(400);
    e->n = 4;
    ptt_init(&s, &c, env_tlps, env_dma, env_irq, e);
    start(&s, 256, CTRL_PORT0_P_IN | PTT_CTRL_8DW | 2u << 2, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 1000), ==, 64);
    g_assert_cmphex(mem32(e, MEM_BASE), ==, PTT_8DW_MARK);
    g_assert_cmphex(mem32(e, MEM_BASE + 28), ==, 100);
    g_assert_cmphex(mem32(e, MEM_BASE + 32 + 28), ==, 400);
    g_free(e);
}

static void test_budget_and_bad_address(void)
{
    PttConfig c = cfg_default();
    PttCore s;
    Env *e = g_new0(Env, 1);

    /* one 8DW record a millisecond */
    c.max_bytes_per_s = 32000;
    for (unsigned i = 0; i < 30; i++) {
        e->tlp[i] = mwr64(100000 * i);   /* 10 a millisecond, 3 ms */
    }
    e->n = 30;
    ptt_init(&s, &c, env_tlps, env_dma, env_irq, e);
    start(&s, 4096, CTRL_PORT0_P_IN | PTT_CTRL_8DW | 2u << 2, 0);
    /* a look early in the first millisecond, its budget then spent */
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 1), ==, 32);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_WR_STS, 3000000), ==, 96);
    g_assert_cmpuint(s.stats.records, ==, 3);
    g_assert_cmpuint(s.stats.dropped_budget, ==, 27);
    g_assert_cmpuint(e->count_calls, >, 0);

    /* a buffer outside memory: the trace halts, nothing written */
    c.max_bytes_per_s = 1ull << 40;
    ptt_init(&s, &c, env_tlps, env_dma, env_irq, e);
    start(&s, 4096, CTRL_PORT0_P_IN, 0);
    ptt_write(&s, PTT_TRACE_ADDR_LO(0), 0xFFFF0000u, 0);
    g_assert_cmphex(ptt_read(&s, PTT_TRACE_STS, 500000) & 1, ==, 1);
    g_assert_cmpuint(s.stats.dma_errors, ==, 1);
    g_assert_cmpuint(s.stats.records, ==, 0);
    g_free(e);
}

static void test_migration(void)
{
    PttConfig c = cfg_default();
    PttCore a, b;
    Env *e = g_new0(Env, 1);
    size_t len;
    void *bytes;
    char *err;

    for (unsigned i = 0; i < 20; i++) {
        e->tlp[i] = mwr64(1000 + 10 * i);
    }
    e->n = 20;
    ptt_init(&a, &c, env_tlps, env_dma, env_irq, e);
    start(&a, 64, CTRL_PORT0_P_IN, 500);
    ptt_read(&a, PTT_TRACE_STS, 1055);
    bytes = ptt_save(&a, &len);
    ptt_init(&b, &c, env_tlps, env_dma, env_irq, e);
    g_assert_null(ptt_load(&b, bytes, len));
    for (uint32_t off = 0; off < PTT_BAR_SIZE; off += 4) {
        g_assert_cmphex(ptt_read(&b, off, 1055), ==, ptt_read(&a, off, 1055));
    }
    g_assert_cmphex(ptt_read(&b, PTT_TRACE_WR_STS, 5000), ==,
                    ptt_read(&a, PTT_TRACE_WR_STS, 5000));
    g_assert_cmpuint(b.stats.records, ==, a.stats.records);
    err = ptt_load(&b, bytes, len - 8);
    g_assert_nonnull(err);
    g_free(err);
    memset(bytes, 0, 8);
    err = ptt_load(&b, bytes, len);
    g_assert_nonnull(err);
    g_free(err);
    g_free(bytes);
    g_free(e);
}

static void test_config(void)
{
    PttConfig c = cfg_default();
    char *err;

    g_assert_null(ptt_config_check(&c));
    c.range_lower = 0x20;
    err = ptt_config_check(&c);
    g_assert_nonnull(strstr(err, "lower"));
    g_free(err);
    c = cfg_default();
    c.max_bytes_per_s = 100;
    err = ptt_config_check(&c);
    g_assert_nonnull(err);
    g_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptt/identity-tune", test_identity_and_tune);
    g_test_add_func("/ptt/encode", test_encode);
    g_test_add_func("/ptt/match", test_match);
    g_test_add_func("/ptt/rotation", test_rotation);
    g_test_add_func("/ptt/formats-filters", test_formats_and_filters);
    g_test_add_func("/ptt/budget-bad-address", test_budget_and_bad_address);
    g_test_add_func("/ptt/migration", test_migration);
    g_test_add_func("/ptt/config", test_config);
    return g_test_run();
}
