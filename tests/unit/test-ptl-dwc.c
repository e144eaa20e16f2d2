/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The port above a card against a prepared sysfs tree laid out as Linux
 * lays it out (PCIE_TELEMETRY_SYSFS is its bus/pci; bus/pci/devices/<BDF>
 * link into devices/pci0000:00/..., the PMUs are in bus/event_source/
 * devices): the PMU names dwc_pcie_pmu gives, the PMUs found above cards
 * behind a root port, behind a switch, without a PMU and on the root bus,
 * format fields and event aliases parsed and encoded, the error messages.
 * perf_event_open is tried on a PMU of the tree whose type is the
 * kernel's software PMU. With PTT_TOOL, pcie-telemetry --list and --port
 * on the same tree: the PMU shown, the two-ended report in text and JSON,
 * read back with --input, and the errors with their exit codes.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcie-telemetry.h"
#include "test-sysfs-support.h"

static char *top;       /* the fake /: <top>/sys/... */
static char *sys;       /* <top>/sys */

/*
 * A PCI function at sys/devices/<path> (its last component the BDF),
 * linked from bus/pci/devices when card: a function with the defaults'
 * block at offset 0 of BAR0 and no capabilities (read with --bar 0
 * --offset 0).
 */
static void add_function(const char *path, bool card)
{
    g_autofree char *dir = g_build_filename(sys, "devices", path, NULL);
    g_autofree char *slot = g_path_get_basename(path);
    g_autofree char *link = g_build_filename(sys, "bus/pci/devices", slot,
                                             NULL);
    g_autofree char *target = g_build_filename("../../../devices", path,
                                               NULL);
    static const uint32_t regs[16] = {
        0x50544C4D, 0x00020000, 0x00020101, 0x30300040,
        0x0E02021F, 0x00020211, 0x00041000, 0x00008000,
        0, 0, 0, 0x02020202, 0x00200020, 0x00000204, 0x04000100, 0x00200020,
    };
    g_autofree uint8_t *config = g_malloc0(4096);
    g_autofree uint8_t *bar = g_malloc0(0x10000);
    GString *r;

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    if (!card) {
        return;
    }
    tsys_put(dir, "vendor", "0x1234\n", -1);
    tsys_put(dir, "device", "0x0d7b\n", -1);
    tsys_put(dir, "class", "0x020000\n", -1);
    tsys_put(dir, "irq", "0\n", -1);
    r = g_string_new("0x00000000fe000000 0x00000000fe00ffff "
                     "0x0000000000040200\n");
    for (int i = 1; i < 7; i++) {
        g_string_append(r, "0x0000000000000000 0x0000000000000000 "
                        "0x0000000000000000\n");
    }
    tsys_put(dir, "resource", r->str, r->len);
    g_string_free(r, TRUE);
    config[0] = 0x34;
    config[1] = 0x12;
    config[2] = 0x7b;
    config[3] = 0x0d;
    config[4] = 0x06;           /* Command: memory, bus master (firmware) */
    tsys_put(dir, "config", config, 4096);
    memcpy(bar, regs, sizeof(regs));
    tsys_put(dir, "resource0", bar, 0x10000);
    g_assert_cmpint(symlink(target, link), ==, 0);
}

/* A PMU as dwc_pcie_pmu registers it, of the given type and CPU list. */
static void add_pmu(const char *name, const char *type, const char *cpumask)
{
    g_autofree char *real = g_build_filename(sys, "devices/platform",
                                             name, NULL);
    g_autofree char *fmt = g_build_filename(real, "format", NULL);
    g_autofree char *ev = g_build_filename(real, "events", NULL);
    g_autofree char *link = g_build_filename(sys, "bus/event_source/devices",
                                             name, NULL);
    g_autofree char *target = g_build_filename("../../../devices/platform",
                                               name, NULL);
    g_autofree char *t = g_strdup_printf("%s\n", type);
    g_autofree char *c = g_strdup_printf("%s\n", cpumask);

    g_assert_cmpint(g_mkdir_with_parents(fmt, 0755), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(ev, 0755), ==, 0);
    tsys_put(real, "type", t, -1);
    tsys_put(real, "cpumask", c, -1);
    tsys_put(fmt, "eventid", "config:0-15\n", -1);
    tsys_put(fmt, "type", "config:16-19\n", -1);
    tsys_put(fmt, "lane", "config:20-27\n", -1);
    tsys_put(ev, "Tx_PCIe_TLP_Data_Payload", "eventid=0x20,type=0x0\n", -1);
    tsys_put(ev, "Rx_PCIe_TLP_Data_Payload", "eventid=0x21,type=0x0\n", -1);
    tsys_put(ev, "L0", "eventid=0x3,type=0x0\n", -1);
    tsys_put(ev, "rx_memory_read", "eventid=0x70c,type=0x1,lane=?\n", -1);
    g_assert_cmpint(symlink(target, link), ==, 0);
}

/*
 * A PMU whose type is the kernel's software PMU (1) and whose payload
 * events are cpu-clock (software event 0): perf_event_open really counts
 * on it, in nanoseconds.
 */
static void add_software_pmu(const char *name)
{
    g_autofree char *real = g_build_filename(sys, "devices/platform",
                                             name, NULL);
    g_autofree char *fmt = g_build_filename(real, "format", NULL);
    g_autofree char *ev = g_build_filename(real, "events", NULL);
    g_autofree char *link = g_build_filename(sys, "bus/event_source/devices",
                                             name, NULL);
    g_autofree char *target = g_build_filename("../../../devices/platform",
                                               name, NULL);

    g_assert_cmpint(g_mkdir_with_parents(fmt, 0755), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(ev, 0755), ==, 0);
    tsys_put(real, "type", "1\n", -1);
    tsys_put(real, "cpumask", "0\n", -1);
    tsys_put(fmt, "event", "config:0-63\n", -1);
    tsys_put(ev, "Rx_PCIe_TLP_Data_Payload", "event=0x0\n", -1);
    tsys_put(ev, "Tx_PCIe_TLP_Data_Payload", "event=0x0\n", -1);
    g_assert_cmpint(symlink(target, link), ==, 0);
}

static void setup(void)
{
    g_autofree char *pci = NULL;
    g_autofree char *d = NULL;

    top = g_dir_make_tmp("ptl-dwc-XXXXXX", NULL);
    g_assert_nonnull(top);
    sys = g_build_filename(top, "sys", NULL);
    pci = g_build_filename(sys, "bus/pci", NULL);
    d = g_build_filename(sys, "bus/pci/devices", NULL);
    g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
    g_free(d);
    d = g_build_filename(sys, "bus/event_source/devices", NULL);
    g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
    g_setenv("PCIE_TELEMETRY_SYSFS", pci, TRUE);

    /* behind the root port 00:01.0, which has a PMU */
    add_function("pci0000:00/0000:00:01.0/0000:01:00.0", true);
    add_pmu("dwc_rootport_8", "60000", "1");
    /* behind a switch (02:00.0 up, 03:01.0 down) below root port 00:02.0 */
    add_function("pci0000:00/0000:00:02.0/0000:02:00.0/0000:03:01.0/"
                 "0000:04:00.0", true);
    add_pmu("dwc_rootport_10", "60001", "0-1");
    add_pmu("dwc_rootport_308", "60002", "0");
    /* behind a root port without a PMU */
    add_function("pci0000:00/0000:00:03.0/0000:05:00.0", true);
    /* on the root bus */
    add_function("pci0000:00/0000:00:06.0", true);
    /* behind a root port whose PMU really counts (software, cpu-clock) */
    add_function("pci0000:00/0000:00:04.0/0000:06:00.0", true);
    add_software_pmu("dwc_rootport_20");
    /* in domain 1: 0001:30:03.0, the driver's documented example */
    add_function("pci0001:30/0001:30:03.0/0001:31:00.0", true);
    add_pmu("dwc_rootport_13018", "60003", "3");
}

static void test_name(void)
{
    char name[64];

    ptl_dwc_pmu_name(0, 0, 0x08, name, sizeof(name));
    g_assert_cmpstr(name, ==, "dwc_rootport_8");
    /* 0001:30:03.0: devfn 3 << 3 */
    ptl_dwc_pmu_name(1, 0x30, 0x18, name, sizeof(name));
    g_assert_cmpstr(name, ==, "dwc_rootport_13018");
    ptl_dwc_pmu_name(0, 0xff, 0xff, name, sizeof(name));
    g_assert_cmpstr(name, ==, "dwc_rootport_ffff");
    /* the driver's id is 32 bits: the domain's high bits fall off */
    ptl_dwc_pmu_name(0x10002, 0x01, 0x00, name, sizeof(name));
    g_assert_cmpstr(name, ==, "dwc_rootport_20100");
}

static void test_pmu_dir(void)
{
    g_autofree char *saved = g_strdup(g_getenv("PCIE_TELEMETRY_SYSFS"));
    g_autofree char *want = g_build_filename(sys, "bus/event_source/devices",
                                             NULL);
    g_autofree char *slash = g_strconcat(saved, "/", NULL);
    char dir[PATH_MAX];

    ptl_pmu_dir(dir, sizeof(dir));
    g_assert_cmpstr(dir, ==, want);
    g_setenv("PCIE_TELEMETRY_SYSFS", slash, TRUE);
    ptl_pmu_dir(dir, sizeof(dir));
    g_assert_cmpstr(dir, ==, want);
    g_unsetenv("PCIE_TELEMETRY_SYSFS");
    ptl_pmu_dir(dir, sizeof(dir));
    g_assert_cmpstr(dir, ==, "/sys/bus/event_source/devices");
    g_setenv("PCIE_TELEMETRY_SYSFS", "", TRUE);
    ptl_pmu_dir(dir, sizeof(dir));
    g_assert_cmpstr(dir, ==, "/sys/bus/event_source/devices");
    g_setenv("PCIE_TELEMETRY_SYSFS", saved, TRUE);
}

static void check_dwc_pmu(const ptl_pmu *p, const char *name,
                          const char *bridge, uint32_t type, int cpu)
{
    g_autofree char *dir = g_build_filename(sys, "bus/event_source/devices",
                                            name, NULL);

    g_assert_cmpstr(p->name, ==, name);
    g_assert_cmpstr(p->bridge, ==, bridge);
    g_assert_cmpstr(p->sysfs, ==, dir);
    g_assert_cmpuint(p->type, ==, type);
    g_assert_cmpint(p->cpu, ==, cpu);
    g_assert_true(p->has_cpumask);
    /* sorted by name */
    g_assert_cmpuint(p->nformats, ==, 3);
    g_assert_cmpstr(p->formats[0].name, ==, "eventid");
    g_assert_cmpuint(p->formats[0].word, ==, 0);
    g_assert_cmphex(p->formats[0].mask, ==, 0xffff);
    g_assert_cmpstr(p->formats[1].name, ==, "lane");
    g_assert_cmphex(p->formats[1].mask, ==, 0xff00000);
    g_assert_cmpstr(p->formats[2].name, ==, "type");
    g_assert_cmphex(p->formats[2].mask, ==, 0xf0000);
}

static void test_find(void)
{
    g_autofree char *bus_path = g_build_filename(sys, "bus/pci/devices",
                                                 "0000:01:00.0", NULL);
    g_autofree char *dev_path = g_build_filename(
        sys, "devices/pci0000:00/0000:00:01.0/0000:01:00.0", NULL);
    const char *cards[] = { "0000:01:00.0", "01:00.0", bus_path, dev_path };
    ptl_pmu *p;
    unsigned n;
    ptl_error e = { 0 };

    /* an address, a short one, a bus/pci path, the resolved path */
    for (unsigned i = 0; i < G_N_ELEMENTS(cards); i++) {
        g_assert_cmpint(ptl_dwc_find(cards[i], &p, &n, &e), ==, PTL_OK);
        g_assert_cmpuint(n, ==, 1);
        check_dwc_pmu(&p[0], "dwc_rootport_8", "0000:00:01.0", 60000, 1);
        free(p);
    }

    /* behind a switch: both PMUs, the nearest bridge first */
    g_assert_cmpint(ptl_dwc_find("0000:04:00.0", &p, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    check_dwc_pmu(&p[0], "dwc_rootport_308", "0000:03:01.0", 60002, 0);
    check_dwc_pmu(&p[1], "dwc_rootport_10", "0000:00:02.0", 60001, 0);
    free(p);

    /* another domain */
    g_assert_cmpint(ptl_dwc_find("0001:31:00.0", &p, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    check_dwc_pmu(&p[0], "dwc_rootport_13018", "0001:30:03.0", 60003, 3);
    free(p);
}

static void test_find_errors(void)
{
    g_autofree char *dir = g_build_filename(sys, "bus/event_source/devices",
                                            NULL);
    g_autofree char *not_pci = g_build_filename(sys, "devices/pci0000:00",
                                                NULL);
    ptl_pmu *p = (ptl_pmu *)&p;
    unsigned n = 7;
    ptl_error e = { 0 };

    g_assert_cmpint(ptl_dwc_find("0000:05:00.0", &p, &n, &e), ==, PTL_E_PMU);
    g_assert_null(p);
    g_assert_cmpuint(n, ==, 0);
    g_assert_cmpuint(e.code, ==, PTL_E_PMU);
    g_assert_true(g_str_has_prefix(e.msg, "no DesignWare PMU above "
                                   "0000:05:00.0 (is dwc_pcie_pmu loaded? "
                                   "is the port a RAS DES root port?"));
    g_assert_nonnull(strstr(e.msg, "dwc_rootport_18 of 0000:00:03.0"));
    g_assert_nonnull(strstr(e.msg, dir));

    g_assert_cmpint(ptl_dwc_find("0000:00:06.0", &p, &n, &e), ==, PTL_E_PMU);
    g_assert_cmpstr(e.msg, ==, "no DesignWare PMU above 0000:00:06.0 (it "
                    "sits on a root bus, with no port above it)");

    g_assert_cmpint(ptl_dwc_find("0000:09:00.0", &p, &n, &e), ==,
                    PTL_E_NO_CARD);
    g_assert_true(g_str_has_prefix(e.msg, "cannot find 0000:09:00.0 in "
                                   "sysfs"));
    g_assert_cmpint(ptl_dwc_find("nonsense", &p, &n, &e), ==, PTL_E_USAGE);
    g_assert_cmpint(ptl_dwc_find(not_pci, &p, &n, &e), ==, PTL_E_NO_CARD);
    g_assert_nonnull(strstr(e.msg, "is not a PCI function"));
}

static void load(const char *name, ptl_pmu *p)
{
    g_autofree char *dir = g_build_filename(sys, "bus/event_source/devices",
                                            name, NULL);
    ptl_error e = { 0 };

    g_assert_cmpint(ptl_pmu_load(dir, p, &e), ==, PTL_OK);
}

static void test_format_parse(void)
{
    ptl_pmu_format f;
    ptl_error e = { 0 };
    static const char *const bad[] = {
        "config", "config4:0-3", "conf:1", "config:", "config:8-3",
        "config:0-64", "config:a-b", "config:1,", "config:-3", "config:0x",
        "config:1-2-3",
    };

    g_assert_cmpint(ptl_pmu_format_parse("f", "config:0-15", &f, &e), ==,
                    PTL_OK);
    g_assert_cmpstr(f.name, ==, "f");
    g_assert_cmpuint(f.word, ==, 0);
    g_assert_cmphex(f.mask, ==, 0xffff);
    g_assert_cmpint(ptl_pmu_format_parse("f", "config:0-7,32-35", &f, &e),
                    ==, PTL_OK);
    g_assert_cmphex(f.mask, ==, 0xf000000ffull);
    g_assert_cmpint(ptl_pmu_format_parse("f", "config1:5", &f, &e), ==,
                    PTL_OK);
    g_assert_cmpuint(f.word, ==, 1);
    g_assert_cmphex(f.mask, ==, 0x20);
    g_assert_cmpint(ptl_pmu_format_parse("f", "config2:0-63", &f, &e), ==,
                    PTL_OK);
    g_assert_cmpuint(f.word, ==, 2);
    g_assert_cmphex(f.mask, ==, UINT64_MAX);
    g_assert_cmpint(ptl_pmu_format_parse("f", "config3:63", &f, &e), ==,
                    PTL_OK);
    g_assert_cmpuint(f.word, ==, 3);
    g_assert_cmphex(f.mask, ==, 1ull << 63);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_cmpint(ptl_pmu_format_parse("f", bad[i], &f, &e), ==,
                        PTL_E_PMU);
        g_assert_true(g_str_has_prefix(e.msg, "format f: "));
        g_assert_nonnull(strstr(e.msg, bad[i]));
    }
}

static void test_encode(void)
{
    ptl_pmu p;
    ptl_pmu_event ev;
    ptl_error e = { 0 };
    uint64_t cfg[PTL_PMU_CONFIG_WORDS] = { 0 };

    load("dwc_rootport_8", &p);
    /* aliases, as the driver describes them */
    g_assert_cmpint(ptl_pmu_event_get(&p, "Rx_PCIe_TLP_Data_Payload", &ev,
                                      &e), ==, PTL_OK);
    g_assert_cmpstr(ev.name, ==, "Rx_PCIe_TLP_Data_Payload");
    g_assert_cmphex(ev.config[0], ==, 0x21);
    g_assert_cmphex(ev.config[1] | ev.config[2] | ev.config[3], ==, 0);
    g_assert_cmpfloat(ev.scale, ==, 1.0);
    g_assert_cmpstr(ev.unit, ==, "");
    g_assert_cmpint(ptl_pmu_event_get(&p, "Tx_PCIe_TLP_Data_Payload", &ev,
                                      &e), ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x20);
    /* as perf, an alias matches regardless of case */
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_pcie_tlp_data_payload", &ev,
                                      &e), ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x21);
    /* a lane event: the lane is the caller's */
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_memory_read,lane=3", &ev, &e),
                    ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x70c | 1 << 16 | 3 << 20);
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_memory_read,lane=0xff", &ev,
                                      &e), ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x70c | 1 << 16 | 0xff << 20);
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_memory_read", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_cmpstr(e.msg, ==, "dwc_rootport_8/rx_memory_read/ needs lane=N "
                    "(its sysfs entry is 'eventid=0x70c,type=0x1,lane=?')");
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_memory_read,lane=256", &ev,
                                      &e), ==, PTL_E_PMU);
    g_assert_cmpstr(e.msg, ==, "dwc_rootport_8: lane=256 does not fit its "
                    "8 bits");
    g_assert_cmpint(ptl_pmu_event_get(&p, "rx_memory_read,lane=?", &ev, &e),
                    ==, PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "lane=? must be given a value"));
    /* a later term replaces what the alias set */
    g_assert_cmpint(ptl_pmu_event_get(&p, "L0,eventid=7", &ev, &e), ==,
                    PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 7);
    /* terms alone, and whole words */
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=0x21,type=0", &ev, &e),
                    ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x21);
    g_assert_cmpint(ptl_pmu_event_get(&p, "config=0x1234,config1=5,"
                                      "config2=6,config3=7", &ev, &e),
                    ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 0x1234);
    g_assert_cmphex(ev.config[1], ==, 5);
    g_assert_cmphex(ev.config[2], ==, 6);
    g_assert_cmphex(ev.config[3], ==, 7);
    /* a term without a value is 1 */
    g_assert_cmpint(ptl_pmu_event_get(&p, "type", &ev, &e), ==, PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 1 << 16);
    /* leading zeros are decimal, as perf reads them */
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=010", &ev, &e), ==,
                    PTL_OK);
    g_assert_cmphex(ev.config[0], ==, 10);

    g_assert_cmpint(ptl_pmu_event_get(&p, "Rx_PCIe", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_true(g_str_has_prefix(e.msg, "dwc_rootport_8 has no event "
                                   "'Rx_PCIe' (see "));
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=1,umask=2", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_cmpstr(e.msg, ==, "dwc_rootport_8 has no format field 'umask' "
                    "(it has eventid, lane, type)");
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=0x", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "is not a number"));
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=-1", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=0x10000", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_cmpint(ptl_pmu_event_get(&p, "eventid=1,,type=1", &ev, &e), ==,
                    PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "empty term"));
    g_assert_cmpint(ptl_pmu_event_get(&p, "", &ev, &e), ==, PTL_E_PMU);

    /* fields spread over several ranges take the value's bits in order */
    p.nformats = 1;
    g_assert_cmpint(ptl_pmu_format_parse("split", "config:0-3,8-11",
                                         &p.formats[0], &e), ==, PTL_OK);
    g_assert_cmpint(ptl_pmu_encode(&p, "split=0xab", false, cfg, &e), ==,
                    PTL_OK);
    g_assert_cmphex(cfg[0], ==, 0xa0b);
    /* over what the words hold: only the field's bits change */
    cfg[0] = 0xfffff;
    g_assert_cmpint(ptl_pmu_encode(&p, "split=0x12", false, cfg, &e), ==,
                    PTL_OK);
    g_assert_cmphex(cfg[0], ==, 0xff1f2);
    g_assert_cmpint(ptl_pmu_encode(&p, "split=0x100", false, cfg, &e), ==,
                    PTL_E_PMU);
    /* an unset term left for later */
    cfg[0] = 0;
    g_assert_cmpint(ptl_pmu_encode(&p, "split=?", true, cfg, &e), ==,
                    PTL_OK);
    g_assert_cmphex(cfg[0], ==, 0);
}

static void test_scale_unit(void)
{
    g_autofree char *ev = g_build_filename(sys, "devices/platform",
                                           "dwc_rootport_8/events", NULL);
    ptl_pmu p;
    ptl_pmu_event e1;
    ptl_error e = { 0 };

    tsys_put(ev, "L0.scale", "2.5e-1\n", -1);
    tsys_put(ev, "L0.unit", "ms\n", -1);
    load("dwc_rootport_8", &p);
    g_assert_cmpint(ptl_pmu_event_get(&p, "L0", &e1, &e), ==, PTL_OK);
    g_assert_cmpfloat(e1.scale, ==, 0.25);
    g_assert_cmpstr(e1.unit, ==, "ms");
    tsys_put(ev, "L0.scale", "zero\n", -1);
    g_assert_cmpint(ptl_pmu_event_get(&p, "L0", &e1, &e), ==, PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "is not a scale"));
    {
        g_autofree char *s = g_build_filename(ev, "L0.scale", NULL);
        g_autofree char *u = g_build_filename(ev, "L0.unit", NULL);

        g_remove(s);
        g_remove(u);
    }
}

static void test_load_errors(void)
{
    g_autofree char *dir = g_build_filename(top, "pmu-bad", NULL);
    g_autofree char *fmt = g_build_filename(dir, "format", NULL);
    g_autofree char *missing = g_build_filename(top, "pmu-missing", NULL);
    ptl_pmu p;
    ptl_error e = { 0 };

    g_assert_cmpint(ptl_pmu_load(missing, &p, &e), ==, PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "cannot read"));
    g_assert_nonnull(strstr(e.msg, "/pmu-missing/type"));

    g_assert_cmpint(g_mkdir_with_parents(fmt, 0755), ==, 0);
    tsys_put(dir, "type", "twelve\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "'twelve' is not a PMU type"));
    tsys_put(dir, "type", "12\n", -1);
    /* no cpumask: CPU 0; an empty one as well */
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_OK);
    g_assert_cmpstr(p.name, ==, "pmu-bad");
    g_assert_cmpuint(p.type, ==, 12);
    g_assert_cmpint(p.cpu, ==, 0);
    g_assert_false(p.has_cpumask);
    g_assert_cmpuint(p.nformats, ==, 0);
    tsys_put(dir, "cpumask", "\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_OK);
    g_assert_false(p.has_cpumask);
    tsys_put(dir, "cpumask", "5,7-9\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_OK);
    g_assert_cmpint(p.cpu, ==, 5);
    g_assert_true(p.has_cpumask);
    tsys_put(dir, "cpumask", "x\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_E_PMU);
    tsys_put(dir, "cpumask", "2\n", -1);
    tsys_put(fmt, "event", "config9:0-7\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_E_PMU);
    g_assert_true(g_str_has_prefix(e.msg, "pmu-bad: format event: "));
    tsys_put(fmt, "event", "config:0-7\n", -1);
    g_assert_cmpint(ptl_pmu_load(dir, &p, &e), ==, PTL_OK);
    g_assert_cmpuint(p.nformats, ==, 1);
    /* the name is the directory's, trailing slashes or not */
    {
        g_autofree char *slash = g_strconcat(dir, "//", NULL);

        g_assert_cmpint(ptl_pmu_load(slash, &p, &e), ==, PTL_OK);
        g_assert_cmpstr(p.name, ==, "pmu-bad");
        g_assert_cmpstr(p.sysfs, ==, dir);
    }
    /* events without a directory of aliases: terms only */
    {
        ptl_pmu_event ev;

        g_assert_cmpint(ptl_pmu_event_get(&p, "Rx_PCIe_TLP_Data_Payload",
                                          &ev, &e), ==, PTL_E_PMU);
        g_assert_cmpint(ptl_pmu_event_get(&p, "event=9", &ev, &e), ==,
                        PTL_OK);
        g_assert_cmphex(ev.config[0], ==, 9);
    }
    tsys_rm_rf(dir);
}

static void test_errno_messages(void)
{
    ptl_pmu p;
    ptl_error e = { 0 };
    int level = ptl_perf_paranoid();
    g_autofree char *text = NULL;
    g_autofree char *want = NULL;

    load("dwc_rootport_8", &p);
    /* the level the kernel has, as the file says it */
    if (g_file_get_contents("/proc/sys/kernel/perf_event_paranoid", &text,
                            NULL, NULL)) {
        g_assert_cmpint(level, ==, atoi(text));
        want = g_strdup_printf("/proc/sys/kernel/perf_event_paranoid is %d",
                               level);
    } else {
        g_assert_cmpint(level, ==, INT_MIN);
        want = g_strdup("/proc/sys/kernel/perf_event_paranoid is unreadable");
    }
    g_assert_cmpint(ptl_pmu_errno_error(&p, "Rx_PCIe_TLP_Data_Payload",
                                        EACCES, &e), ==, PTL_E_PERM);
    g_assert_true(g_str_has_prefix(e.msg, "counting dwc_rootport_8/"
                                   "Rx_PCIe_TLP_Data_Payload/ was refused "));
    g_assert_nonnull(strstr(e.msg, "needs root or CAP_PERFMON; "));
    g_assert_true(g_str_has_suffix(e.msg, want));
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", EPERM, &e), ==,
                    PTL_E_PERM);
    g_assert_nonnull(strstr(e.msg, "needs root or CAP_PERFMON"));
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", ENOSPC, &e), ==,
                    PTL_E_BUSY);
    g_assert_true(g_str_has_prefix(e.msg, "dwc_rootport_8/L0/: the PMU's "
                                   "counter is in use"));
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", EBUSY, &e), ==,
                    PTL_E_BUSY);
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", ENOENT, &e), ==,
                    PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "went away"));
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", ENODEV, &e), ==,
                    PTL_E_PMU);
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", EINVAL, &e), ==,
                    PTL_E_PMU);
    g_assert_nonnull(strstr(e.msg, "refused the event"));
    g_assert_cmpint(ptl_pmu_errno_error(&p, "L0", EMFILE, &e), ==,
                    PTL_E_INTERNAL);
    g_assert_cmpstr(ptl_err_name(PTL_E_PMU), ==, "PMU");
}

/* perf_event_open on the PMU of the tree whose type is the kernel's */
static void test_counter(void)
{
    ptl_pmu *pmus, bogus;
    unsigned n;
    ptl_pmu_event ev;
    ptl_pmu_counter *c;
    ptl_pmu_value v0, v1, v2;
    ptl_error e = { 0 };
    ptl_err rc;

    g_assert_cmpint(ptl_dwc_find("0000:06:00.0", &pmus, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(pmus[0].type, ==, 1);
    g_assert_cmpint(ptl_pmu_event_get(&pmus[0], "Rx_PCIe_TLP_Data_Payload",
                                      &ev, &e), ==, PTL_OK);
    rc = ptl_pmu_counter_open(&pmus[0], &ev, &c, &e);
    if (rc == PTL_E_PERM) {
        /* not allowed here: the message says why */
        g_assert_nonnull(strstr(e.msg, "needs root or CAP_PERFMON"));
        free(pmus);
        g_test_skip("perf_event_open refused here");
        return;
    }
    if (rc == PTL_E_PMU && strstr(e.msg, "not available")) {
        free(pmus);
        g_test_skip("no perf_event_open here");
        return;
    }
    g_assert_cmpint(rc, ==, PTL_OK);
    /* created disabled: nothing counted */
    g_assert_cmpint(ptl_pmu_counter_read(c, &v0, &e), ==, PTL_OK);
    g_assert_cmpuint(v0.value, ==, 0);
    g_assert_cmpuint(v0.enabled_ns, ==, 0);
    g_assert_cmpint(ptl_pmu_counter_enable(c, &e), ==, PTL_OK);
    g_usleep(50000);
    g_assert_cmpint(ptl_pmu_counter_disable(c, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_pmu_counter_read(c, &v1, &e), ==, PTL_OK);
    /* cpu-clock counts the nanoseconds it ran */
    g_assert_cmpuint(v1.enabled_ns, >=, 45000000);
    g_assert_cmpuint(v1.running_ns, ==, v1.enabled_ns);
    g_assert_cmpuint(v1.value, >=, v1.running_ns * 9 / 10);
    g_assert_cmpuint(v1.value, <=, v1.running_ns * 11 / 10 + 1000000);
    /* disabled: it stands still */
    g_usleep(20000);
    g_assert_cmpint(ptl_pmu_counter_read(c, &v2, &e), ==, PTL_OK);
    g_assert_cmpuint(v2.value, ==, v1.value);
    g_assert_cmpuint(v2.enabled_ns, ==, v1.enabled_ns);
    ptl_pmu_counter_close(c);

    /* a PMU type the kernel does not have */
    bogus = pmus[0];
    bogus.type = 60000;
    g_assert_cmpint(ptl_pmu_counter_open(&bogus, &ev, &c, &e), ==,
                    PTL_E_PMU);
    g_assert_true(g_str_has_prefix(e.msg, "dwc_rootport_20/"
                                   "Rx_PCIe_TLP_Data_Payload/: no such PMU "
                                   "or event"));
    free(pmus);
}

/* ---------------------------------------------------------------- tool */

static void test_tool_list(void)
{
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--list", NULL };
    g_auto(GStrv) lines = NULL;
    int seen = 0;

    if (!tsys_have_tool()) {
        return;
    }
    g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, 0);
    lines = g_strsplit(out, "\n", -1);
    /* each card's PMU lines come after its own first line */
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, "0000:01:00.0 ")) {
            g_assert_true(g_str_has_prefix(l[1], "    0000:01:00.0 has no "
                                           "NDK device tree"));
            g_assert_cmpstr(l[2], ==, "    port 0000:00:01.0  PMU "
                            "dwc_rootport_8 (type 60000, cpu 1)");
            seen++;
        }
        if (g_str_has_prefix(*l, "0000:04:00.0 ")) {
            g_assert_cmpstr(l[2], ==, "    port 0000:03:01.0  PMU "
                            "dwc_rootport_308 (type 60002, cpu 0)");
            g_assert_cmpstr(l[3], ==, "    port 0000:00:02.0  PMU "
                            "dwc_rootport_10 (type 60001, cpu 0)");
            seen++;
        }
        if (g_str_has_prefix(*l, "0000:05:00.0 ") ||
            g_str_has_prefix(*l, "0000:00:06.0 ")) {
            g_assert_false(g_str_has_prefix(l[2], "    port"));
            seen++;
        }
    }
    g_assert_cmpint(seen, ==, 4);
}

static void test_tool_port(void)
{
    g_autofree char *json = NULL, *err = NULL, *text = NULL, *back = NULL;
    g_autofree char *saved = g_build_filename(top, "both.json", NULL);
    const char *args[] = { "-d", "0000:06:00.0", "--bar", "0", "--offset",
                           "0", "--port", "both", "-t", "0.4", "-j", NULL };
    const char *targs[] = { "-d", "06:00.0", "--bar", "0", "--offset", "0",
                            "--port", "rx", "-t", "0.2", NULL };
    const char *iargs[] = { "--input", saved, "-j", NULL };
    const char *itargs[] = { "--input", saved, NULL };
    g_autoptr(GError) ge = NULL;
    ptl_json *doc;
    ptl_data *d;
    double seconds;
    ptl_error e = { 0 };
    int rc;

    if (!tsys_have_tool()) {
        return;
    }
    rc = tsys_run_tool(args, &json, &err);
    if (rc == PTL_E_PERM || (rc == PTL_E_PMU &&
                             strstr(err, "not available"))) {
        g_test_skip("perf_event_open refused or missing here");
        return;
    }
    g_assert_cmpstr(err, ==, "");
    g_assert_cmpint(rc, ==, 0);
    g_assert_cmpint(ptl_json_parse(json, strlen(json), 0, 0, NULL, &doc, &e),
                    ==, PTL_OK);
    g_assert_cmpint(ptl_data_from_json(doc, &d, &seconds, &e), ==, PTL_OK);
    g_assert_cmpfloat(seconds, >=, 0.39);
    g_assert_nonnull(d->port);
    g_assert_cmpstr(d->port->port, ==, "0000:00:04.0");
    g_assert_cmpstr(d->port->pmu, ==, "dwc_rootport_20");
    g_assert_cmpstr(d->port->card, ==, "0000:06:00.0");
    g_assert_cmpuint(d->port->endpoint, ==, 0);
    /* rx over the first half, tx over the second; cpu-clock counts ns */
    g_assert_true(d->port->rx.measured);
    g_assert_true(d->port->tx.measured);
    g_assert_cmpstr(d->port->rx.event, ==, "Rx_PCIe_TLP_Data_Payload");
    g_assert_cmpstr(d->port->tx.event, ==, "Tx_PCIe_TLP_Data_Payload");
    for (int k = 0; k < 2; k++) {
        const ptl_port_count *pc = k ? &d->port->tx : &d->port->rx;

        /* about half each; a loaded host wakes the tool late */
        g_assert_cmpfloat(pc->seconds, >=, seconds * 0.2);
        g_assert_cmpfloat(pc->seconds, <=, seconds * 0.8);
        g_assert_cmpfloat(pc->enabled_seconds, ==, pc->seconds);
        g_assert_cmpfloat(pc->value, >=, pc->seconds * 1e9 * 0.9);
        g_assert_cmpfloat(pc->value, <=, pc->seconds * 1e9 * 1.1 + 1e6);
    }
    g_assert_cmpfloat(d->port->rx.seconds + d->port->tx.seconds, <=,
                      seconds + 0.01);
    ptl_data_free(d);
    ptl_json_free(doc);

    /* the port's part of a document is read strictly too */
    {
        static const char *const bad[][3] = {
            { "\"device\": \"0000:00:04.0\"", "\"device\": 4",
              "port.device: expected a string, found a number" },
            { "\"endpoint\": 0", "\"endpoint\": -1",
              "port.endpoint: expected an integer" },
            { "\"endpoint\": 0", "\"slot\": 0",
              "port: unknown key \"slot\"" },
            { "\"enabled_seconds\"", "\"seconds_enabled\"",
              "port.rx: unknown key \"seconds_enabled\"" },
            { "\"value\"", "\"count\"", "port.rx: unknown key \"count\"" },
            { "\"pmu\": \"dwc_rootport_20\"", "\"pmu\": null",
              "port.pmu: expected a string, found null" },
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
            GString *t = g_string_new(json);
            ptl_json *v;

            g_assert_cmpuint(g_string_replace(t, bad[i][0], bad[i][1], 1),
                             ==, 1);
            g_assert_cmpint(ptl_json_parse(t->str, t->len, 0, 0, NULL, &v,
                                           &e), ==, PTL_OK);
            g_assert_cmpint(ptl_data_from_json(v, &d, &seconds, &e), ==,
                            PTL_E_USAGE);
            g_assert_null(d);
            g_assert_nonnull(strstr(e.msg, bad[i][2]));
            ptl_json_free(v);
            g_string_free(t, TRUE);
        }
    }

    /* read back: the same document, and the text report of it */
    g_assert_true(g_file_set_contents(saved, json, -1, &ge));
    g_free(err);
    g_assert_cmpint(tsys_run_tool(iargs, &back, &err), ==, 0);
    g_assert_cmpstr(back, ==, json);
    g_free(back);
    g_free(err);
    g_assert_cmpint(tsys_run_tool(itargs, &back, &err), ==, 0);
    g_assert_nonnull(strstr(back, "\nRoot port 0000:00:04.0 (dwc_rootport_20)"
                            " above 0000:06:00.0, PCIe endpoint 0\n"));
    g_assert_nonnull(strstr(back, "\ncard -> port (Rx)  PTC -> PCIe (RQ)  "));
    g_assert_nonnull(strstr(back, "\nport -> card (Tx)  PCIe -> PTC (RC)  "));

    /* text, rx only: tx is not counted */
    g_free(err);
    g_assert_cmpint(tsys_run_tool(targs, &text, &err), ==, 0);
    g_assert_nonnull(strstr(text, "\nRoot port 0000:00:04.0 (dwc_rootport_20)"
                            " above 0000:06:00.0, PCIe endpoint 0\n"
                            "----------------------------------------------"
                            "------------------------------\n"
                            "Direction          Card bus          "
                            "Card Gbps    Port event                "
                            "Port bytes    Port s    Port Gbps\n"));
    g_assert_nonnull(strstr(text, "\ncard -> port (Rx)  PTC -> PCIe (RQ)  "
                            "0.00         Rx_PCIe_TLP_Data_Payload  "));
    g_assert_nonnull(strstr(text, "\nport -> card (Tx)  PCIe -> PTC (RC)  "
                            "0.00         not counted               -"));
}

static void test_tool_errors(void)
{
    static const struct {
        const char *dev, *which;
        int rc;
        const char *msg;
    } cases[] = {
        /* a PMU whose type the kernel does not know */
        { "0000:01:00.0", "rx", PTL_E_PMU, "pcie-telemetry: dwc_rootport_8/"
          "Rx_PCIe_TLP_Data_Payload/: no such PMU or event" },
        { "0000:05:00.0", "tx", PTL_E_PMU, "pcie-telemetry: no DesignWare "
          "PMU above 0000:05:00.0 (is dwc_pcie_pmu loaded? is the port a "
          "RAS DES root port?" },
        { "0000:00:06.0", "both", PTL_E_PMU, "pcie-telemetry: no DesignWare "
          "PMU above 0000:00:06.0 (it sits on a root bus, with no port above "
          "it)\n" },
    };

    if (!tsys_have_tool()) {
        return;
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *out = NULL, *err = NULL;
        const char *args[] = { "-d", cases[i].dev, "--bar", "0", "--offset",
                               "0", "--port", cases[i].which, NULL };

        g_assert_cmpint(tsys_run_tool(args, &out, &err), ==, cases[i].rc);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_prefix(err, cases[i].msg));
        g_assert_cmpuint(strlen(err) - strlen(strchr(err, '\n')), ==,
                         strlen(err) - 1);
    }
}

int main(int argc, char **argv)
{
    int r;

    g_test_init(&argc, &argv, NULL);
    setup();
    g_test_add_func("/ptl-dwc/name", test_name);
    g_test_add_func("/ptl-dwc/pmu-dir", test_pmu_dir);
    g_test_add_func("/ptl-dwc/find", test_find);
    g_test_add_func("/ptl-dwc/find-errors", test_find_errors);
    g_test_add_func("/ptl-dwc/format-parse", test_format_parse);
    g_test_add_func("/ptl-dwc/encode", test_encode);
    g_test_add_func("/ptl-dwc/scale-unit", test_scale_unit);
    g_test_add_func("/ptl-dwc/load-errors", test_load_errors);
    g_test_add_func("/ptl-dwc/errno-messages", test_errno_messages);
    g_test_add_func("/ptl-dwc/counter", test_counter);
    g_test_add_func("/ptl-dwc/tool-list", test_tool_list);
    g_test_add_func("/ptl-dwc/tool-port", test_tool_port);
    g_test_add_func("/ptl-dwc/tool-errors", test_tool_errors);
    r = g_test_run();
    tsys_rm_rf(top);
    g_free(top);
    g_free(sys);
    return r;
}
