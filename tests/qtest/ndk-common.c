/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the QTest programs of ndk-pcie-telemetry share (see ndk-common.h).
 */
#include "ndk-common.h"

const char *const bus_name[4] = { "RQ", "RC", "UP", "DOWN" };

unsigned bus_ch(unsigned i, unsigned k)
{
    return i < 2 ? PCH(i, k) : DCH(i - 2, k);
}

/* ------------------------------------------------------------------ */
/* A QEMU with the card                                               */

static void count_cb(QPCIDevice *dev, int devfn, void *data)
{
    (*(unsigned *)data)++;
    g_free(dev);
}

unsigned ndk_count_functions(QPCIBus *bus, int vendor, int device)
{
    unsigned found = 0;

    qpci_device_foreach(bus, vendor, device, count_cb, &found);
    return found;
}

void ndk_open_bar(Ndk *n, const char *machine, int vendor, int device,
                  uint64_t bar_size, const char *extra)
{
    uint32_t bar0;

    n->t = qndk_start_ids(machine, vendor, device, "%s", extra);
    g_assert(n->t);
    g_assert_cmpint(ndk_count_functions(n->t->bus, vendor, device), ==, 1);
    g_assert_cmphex(n->t->bar_size, ==, bar_size);
    /* a 32-bit, non-prefetchable memory BAR */
    bar0 = qpci_config_readl(n->t->dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(bar0 & 0xF, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    g_test_message("device reset at %" PRId64 " ns of virtual time",
                   n->t->t0);
}

void ndk_open_ids(Ndk *n, const char *machine, int vendor, int device,
                  const char *extra)
{
    ndk_open_bar(n, machine, vendor, device, NDK_BAR_SIZE, extra);
}

void ndk_open_sized(Ndk *n, const char *machine, uint64_t bar_size,
                    const char *extra)
{
    ndk_open_bar(n, machine, PTL_QEMU_VENDOR_ID, PTL_QEMU_DEVICE_ID,
                 bar_size, extra);
}

void ndk_open(Ndk *n, const char *machine, const char *extra)
{
    ndk_open_ids(n, machine, PTL_QEMU_VENDOR_ID, PTL_QEMU_DEVICE_ID, extra);
}

void ndk_open_plugged(Ndk *n, QPCIBus *bus, int64_t now, uint64_t bar_size)
{
    g_assert_cmpint(ndk_count_functions(bus, PTL_QEMU_VENDOR_ID,
                                        PTL_QEMU_DEVICE_ID), ==, 1);
    n->t = qndk_open_at(bus, 0, 0, 0, now, false);
    g_assert(n->t);
    g_assert_cmphex(n->t->bar_size, ==, bar_size);
}

void ndk_close(Ndk *n)
{
    QTestState *qts;
    QPCIBus *bus;

    if (n->t->owns_machine) {
        qndk_stop(n->t);
    } else {
        qts = n->t->qts;
        bus = n->t->bus;
        qndk_close(n->t);
        qpci_free_pc(bus);
        qtest_quit(qts);
    }
    n->t = NULL;
}

void step_to(Ndk *n, int64_t t)
{
    g_assert(t >= n->t->now);
    g_assert(qndk_step_to(n->t, t) == t);
}

void step(Ndk *n, int64_t ns)
{
    step_to(n, n->t->now + ns);
}

int64_t mi_edge(int64_t t)
{
    return ROUND_UP(t, MI_NS);
}

uint32_t rd(Ndk *n, uint32_t off)
{
    return qndk_readl(n->t, off);
}

void wr(Ndk *n, uint32_t off, uint32_t val)
{
    qndk_writel(n->t, off, val);
}

uint64_t rdq(Ndk *n, uint32_t off)
{
    return qndk_readq(n->t, off);
}

uint64_t cnt(Ndk *n, unsigned e)
{
    uint64_t lo = rd(n, CNT(e));
    uint64_t hi = rd(n, CNT(e) + 4);

    return hi << 32 | lo;
}

void read_counters(Ndk *n, unsigned entries, uint64_t *out)
{
    for (unsigned e = 0; e < entries; e++) {
        out[e] = cnt(n, e);
    }
}

uint32_t bar_rd(Ndk *n, uint64_t off)
{
    return qpci_io_readl(n->t->dev, n->t->bar, off);
}

void bar_wr(Ndk *n, uint64_t off, uint32_t val)
{
    qpci_io_writel(n->t->dev, n->t->bar, off, val);
}

uint64_t bar_rdq(Ndk *n, uint64_t off)
{
    return qtest_readq(n->t->qts, n->t->bar.addr + off);
}

unsigned wait_busy(Ndk *n, unsigned max_cycles)
{
    return qndk_wait_busy(n->t, max_cycles);
}

void snapshot(Ndk *n, unsigned entries)
{
    wr(n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step(n, 2 * MI_NS);
    g_assert_cmphex(qndk_status(n->t) & PTL_STATUS_BUSY, ==,
                    PTL_STATUS_BUSY);
    wait_busy(n, 1 + 2 * entries + 8);
}

void check_counters(const char *what, const uint64_t *got,
                    const uint64_t *exp, unsigned entries)
{
    for (unsigned e = 0; e < entries; e++) {
        if (got[e] != exp[e]) {
            g_test_message("%s: entry %u is %" PRIu64 ", expected %" PRIu64,
                           what, e, got[e], exp[e]);
        }
        g_assert_cmpuint(got[e], ==, exp[e]);
    }
}

/* ------------------------------------------------------------------ */
/* Clock arithmetic                                                   */

/* (in 128 bits: an hour of a 400 MHz clock overflows 64 bits in ns) */
uint64_t cycle_at(int64_t t, uint64_t hz)
{
    return (unsigned __int128)t * hz / NS_PER_S;
}

uint64_t first_cycle(int64_t t, uint64_t hz)
{
    return ((unsigned __int128)t * hz + NS_PER_S - 1) / NS_PER_S;
}

int64_t cycle_ns(uint64_t c, uint64_t hz)
{
    return ((unsigned __int128)c * NS_PER_S + hz - 1) / hz;
}

uint64_t drain_cycle(uint64_t origin, uint64_t dp, uint64_t k)
{
    return origin + (k + 1) * dp - 1;
}

uint64_t windows_by(int64_t t, uint64_t origin, uint64_t hz, uint64_t dp)
{
    uint64_t c = cycle_at(t, hz);
    uint64_t w = (c + 1 - origin) / dp;

    g_assert(c + 1 >= origin);
    if (w) {
        g_assert(t - cycle_ns(drain_cycle(origin, dp, w - 1), hz) >= 3000);
    }
    g_assert(cycle_ns(drain_cycle(origin, dp, w), hz) - t >= 1000);
    return w;
}

/*
 * The drain tick samples cycle E + 1 (E = drain_cycle) and its status
 * word crosses a bus handshake to the MI side, where it arrives in the
 * fourth MI cycle after the first one past PCIe edge E + 2 and shows from
 * the next (tests/rtl, docs/ndk-pcie-telemetry.md).
 */
int64_t word_ns(uint64_t origin, uint64_t k)
{
    uint64_t e = drain_cycle(origin, DP, k);

    return (int64_t)(((unsigned __int128)(e + 2) * MI_HZ / PCIE_HZ) + 6) *
           MI_NS;
}

int64_t mid_window(const Ndk *n, unsigned k)
{
    return n->t->t0 + (int64_t)k * 10240 + 5120;
}

void check_cycles(const char *what, const uint64_t *c, int64_t t0,
                  int64_t t)
{
    uint64_t wp = windows_by(t, first_cycle(t0, PCIE_HZ), PCIE_HZ, DP);
    uint64_t wd = windows_by(t, first_cycle(t0, DMA_HZ), DMA_HZ, DP);

    g_test_message("%s: %" PRIu64 " PCIe, %" PRIu64 " DMA windows", what,
                   wp, wd);
    g_assert_cmpuint(c[0], ==, wp ? wp * DP - 1 : 0);
    g_assert_cmpuint(c[31], ==, wd ? wd * DP - 1 : 0);
}

/* ------------------------------------------------------------------ */
/* The register file and the PCIe capability                          */

const RegExpect default_regs[DEFAULT_REGS] = {
    { 0x00, 0x50544C4D }, { 0x04, 0x00020000 }, { 0x08, 0x00020101 },
    { 0x0C, 0x30300040 }, { 0x10, 0x0E02021F }, { 0x14, 0x00020211 },
    { 0x18, 0x00041000 }, { 0x1C, 0x00008000 }, { 0x2C, 0x02020202 },
    { 0x30, 0x00200020 }, { 0x34, 0x00000204 }, { 0x38, 0x04000100 },
    { 0x3C, 0x00200020 },
    /*
     * COMMAND, STATUS, READ_SEL, PCIE_STATUS read 0; endpoint 0's
     * lowest values start at their maximum; endpoints 1..15 read 0
     */
    { 0x80, 0x07FF0000 }, { 0xC0, 0xFFFF0000 },
};

uint32_t status_from_config(uint16_t devctl, uint16_t devctl2,
                            uint16_t lnkctl)
{
    return ((devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5) |
           ((devctl & PCI_EXP_DEVCTL_READRQ) >> 12) << 3 |
           !!(devctl & PCI_EXP_DEVCTL_EXT_TAG) << 6 |
           !!(devctl2 & EXP_DEVCTL2_10BIT_TAG) << 7 |
           !!(lnkctl & PCI_EXP_LNKCTL_RCB) << 8 |
           1 << 9;                                  /* link up */
}

void set_pcie_settings(Ndk *n, uint8_t exp, unsigned mps, unsigned mrrs,
                       bool ext_tag, bool tag10, bool rcb)
{
    QPCIDevice *dev = n->t->dev;
    uint16_t devctl = qpci_config_readw(dev, exp + PCI_EXP_DEVCTL);
    uint16_t devctl2 = qpci_config_readw(dev, exp + PCI_EXP_DEVCTL2);
    uint16_t lnkctl = qpci_config_readw(dev, exp + PCI_EXP_LNKCTL);

    devctl &= ~(PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ |
                PCI_EXP_DEVCTL_EXT_TAG);
    devctl |= mps << 5 | mrrs << 12 | (ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0);
    devctl2 = (devctl2 & ~EXP_DEVCTL2_10BIT_TAG) |
              (tag10 ? EXP_DEVCTL2_10BIT_TAG : 0);
    lnkctl = (lnkctl & ~PCI_EXP_LNKCTL_RCB) | (rcb ? PCI_EXP_LNKCTL_RCB : 0);
    qpci_config_writew(dev, exp + PCI_EXP_DEVCTL, devctl);
    qpci_config_writew(dev, exp + PCI_EXP_DEVCTL2, devctl2);
    qpci_config_writew(dev, exp + PCI_EXP_LNKCTL, lnkctl);
    /* the fields the host negotiates are writable */
    g_assert_cmphex(qpci_config_readw(dev, exp + PCI_EXP_DEVCTL), ==,
                    devctl);
    g_assert_cmphex(qpci_config_readw(dev, exp + PCI_EXP_DEVCTL2), ==,
                    devctl2);
    g_assert_cmphex(qpci_config_readw(dev, exp + PCI_EXP_LNKCTL), ==,
                    lnkctl);
}

uint64_t ecam_at(int bus, int devfn, uint32_t off)
{
    return ECAM_BASE + ((uint64_t)bus << 20 | devfn << 12 | off);
}

void ecam_enable(QPCIBus *bus)
{
    g_assert_cmphex(qndk_q35_ecam(bus), ==, ECAM_BASE);
}

/* PCIEXBAR (0x60, 64 bits): 256 buses at ECAM_BASE, enabled */
void ecam_on(QTestState *qts)
{
    qtest_outl(qts, 0xcf8, 0x80000000u | 0x64);
    qtest_outl(qts, 0xcfc, 0);
    qtest_outl(qts, 0xcf8, 0x80000000u | 0x60);
    qtest_outl(qts, 0xcfc, (uint32_t)ECAM_BASE | 1);
}

void ecam_wr(QTestState *qts, int bus, int devfn, uint32_t off, uint32_t v,
             int len)
{
    uint64_t a = ecam_at(bus, devfn, off);

    if (len == 1) {
        qtest_writeb(qts, a, v);
    } else if (len == 2) {
        qtest_writew(qts, a, v);
    } else {
        qtest_writel(qts, a, v);
    }
}

/* ------------------------------------------------------------------ */
/* QMP, files, QEMUs that must not start                              */

QDict *qom_set_int(QTestState *qts, const char *path, const char *prop,
                   int64_t val)
{
    return qtest_qmp(qts, "{ 'execute': 'qom-set', 'arguments': "
                     "{ 'path': %s, 'property': %s, 'value': %" PRId64
                     " } }", path, prop, val);
}

void qom_set_ok(QTestState *qts, const char *path, const char *prop,
                int64_t val)
{
    QDict *rsp = qom_set_int(qts, path, prop, val);

    if (qdict_haskey(rsp, "error")) {
        g_test_message("qom-set %s %s %" PRId64 ": %s", path, prop, val,
                       qdict_get_str(qdict_get_qdict(rsp, "error"),
                                     "desc"));
    }
    g_assert_false(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

int64_t qom_get_int(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", path, prop);
    int64_t v = INT64_MIN;

    g_assert_true(qdict_haskey(rsp, "return"));
    if (qdict_haskey(rsp, "return")) {
        v = qdict_get_int(rsp, "return");
    }
    qobject_unref(rsp);
    return v;
}

QDict *qom_set_str(QTestState *qts, const char *path, const char *prop,
                   const char *val)
{
    return qtest_qmp(qts, "{ 'execute': 'qom-set', 'arguments': "
                     "{ 'path': %s, 'property': %s, 'value': %s } }",
                     path, prop, val);
}

char *qom_set_error(QDict *rsp)
{
    char *desc = g_strdup(qdict_haskey(rsp, "error") ?
                          qdict_get_str(qdict_get_qdict(rsp, "error"),
                                        "desc") : "");

    qobject_unref(rsp);
    return desc;
}

char *qom_get_str(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", path, prop);
    char *v = NULL;

    g_assert_true(qdict_haskey(rsp, "return"));
    if (qdict_haskey(rsp, "return")) {
        v = g_strdup(qdict_get_str(rsp, "return"));
    }
    qobject_unref(rsp);
    return v ? v : g_strdup("");
}

char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

void expect_start_refused(const char *const *extra, const char *needle)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *base[] = {
        qemu, "-machine", "q35", "-nodefaults", "-display", "none",
        "-accel", "qtest",
    };
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autoptr(GString) err = g_string_new("");
    g_autoptr(GString) what = g_string_new("");
    g_autoptr(GError) gerr = NULL;
    int status = 0, fd, i;
    GPid pid;
    pid_t r = 0;
    char buf[256];
    ssize_t len;

    g_assert(qemu);
    for (i = 0; i < (int)G_N_ELEMENTS(base); i++) {
        g_ptr_array_add(argv, (char *)base[i]);
    }
    for (i = 0; extra[i]; i++) {
        g_ptr_array_add(argv, (char *)extra[i]);
        g_string_append_printf(what, "%s%s", i ? " " : "", extra[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDOUT_TO_DEV_NULL,
                                      NULL, NULL, &pid, NULL, NULL, &fd,
                                      &gerr));
    g_assert(g_unix_set_fd_nonblocking(fd, true, NULL));
    /* 10 s at most: a QEMU that accepted the value would run forever */
    for (i = 0; i < 1000; i++) {
        while ((len = read(fd, buf, sizeof(buf))) > 0) {
            g_string_append_len(err, buf, len);
        }
        r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        g_usleep(10000);
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    while ((len = read(fd, buf, sizeof(buf))) > 0) {
        g_string_append_len(err, buf, len);
    }
    close(fd);
    g_spawn_close_pid(pid);

    g_test_message("%s: %s", what->str, err->str);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), !=, 0);
    if (!strstr(err->str, needle)) {
        g_test_message("the message lacks \"%s\"", needle);
    }
    g_assert_nonnull(strstr(err->str, needle));
}

void expect_refused(const char *props, const char *name)
{
    g_autofree char *dev = g_strdup_printf("ndk-pcie-telemetry,%s", props);
    g_autofree char *quoted = g_strdup_printf("'%s'", name);
    const char *extra[] = { "-device", dev, NULL };

    expect_start_refused(extra, quoted);
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

void wait_migration(QTestState *qts)
{
    for (int i = 0; i < 10000; i++) {
        QDict *rsp = qtest_qmp_assert_success_ref(qts,
                                                  "{ 'execute': "
                                                  "'query-migrate' }");
        const char *st = qdict_haskey(rsp, "status") ?
                         qdict_get_str(rsp, "status") : "none";
        bool done = !strcmp(st, "completed");

        g_assert_cmpstr(st, !=, "failed");
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_usleep(1000);
    }
    g_assert_not_reached();
}

void migrate_out(Ndk *a, const char *uri)
{
    qtest_qmp_assert_success(a->t->qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(a->t->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(a->t->qts);
    ndk_close(a);
}

/*
 * The qtest accelerator's virtual clock is not part of the migration
 * stream: B's clock is brought to t1 (a no-op if it arrived with the
 * state) before the node opens the card, which then steps nothing.
 */
void migrate_in(Ndk *b, const char *machine, const char *args,
                const char *uri, int64_t t0, int64_t t1)
{
    QTestState *qts;
    QPCIDevice *mch, *dev;
    QPCIBus *bus;

    qts = qtest_initf("-machine %s -nodefaults %s -incoming defer",
                      machine, args);
    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(qts);
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    bus = qpci_new_pc(qts, NULL);
    g_assert_cmpint(ndk_count_functions(bus, PTL_QEMU_VENDOR_ID,
                                        PTL_QEMU_DEVICE_ID), ==, 1);
    if (!strcmp(machine, "q35")) {
        /* A's node turned ECAM on: it must come with the MCH's state */
        mch = qpci_device_find(bus, 0);
        g_assert(mch);
        g_assert_cmphex(qpci_config_readl(mch, QNDK_Q35_PCIEXBAR) & 1, ==,
                        1);
        g_free(mch);
    }
    g_assert_cmpint(qtest_clock_set(qts, t1), ==, t1);
    b->t = qndk_open_at(bus, 0, 0, 0, t1, true);
    g_assert(b->t);
    b->t->t0 = t0;
    dev = b->t->dev;
    g_assert_cmphex(qpci_config_readw(dev, PCI_COMMAND) &
                    PCI_COMMAND_MEMORY, ==, PCI_COMMAND_MEMORY);
    g_assert_cmphex(b->t->bar.addr, !=, 0);
}

/* ------------------------------------------------------------------ */
/* Traffic objects                                                    */

char *random_args(const char *props)
{
    return g_strdup_printf("-object telemetry-traffic-random,id=t0%s%s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           *props ? "," : "", props);
}

void ptc_open(Ndk *n, const char *args)
{
    uint8_t exp;

    ndk_open(n, "q35", args);
    exp = qpci_find_capability(n->t->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    set_pcie_settings(n, exp, 1, 2, true, false, false);
}
