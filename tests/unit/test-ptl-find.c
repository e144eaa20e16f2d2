/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libpcie-telemetry's finding half against a prepared sysfs tree
 * (PCIE_TELEMETRY_SYSFS): the scan and its filters, -d as a slot and as a
 * sysfs path, the messages for a card without a device tree, and the BAR
 * mapping with --bar/--offset on a resource file that holds a register
 * image of the block with the defaults of FACTS.md, a card whose device
 * directory goes away between readings, and the PCI Express link read
 * from a capability in the config file.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcie-telemetry.h"
#include "test-sysfs-support.h"

static char *root;

/* A function with no capabilities; config_size 256 = conventional PCI. */
static void add_function(const char *slot, unsigned vendor, unsigned device,
                         gsize config_size, gsize bar0_size,
                         uint32_t block_at)
{
    g_autofree char *dir = g_build_filename(root, "devices", slot, NULL);
    g_autofree char *v = g_strdup_printf("0x%04x\n", vendor);
    g_autofree char *d = g_strdup_printf("0x%04x\n", device);
    g_autofree char *res = g_strdup_printf(
        "0x00000000fe000000 0x%016llx 0x0000000000040200\n",
        (unsigned long long)(0xfe000000ull + bar0_size - 1));
    g_autofree uint8_t *config = g_malloc0(config_size);
    g_autofree uint32_t *bar = g_malloc0(bar0_size);
    /* the configuration registers with the defaults (FACTS.md) */
    static const uint32_t regs[16] = {
        0x50544C4D, 0x00020000, 0x00020101, 0x30300040,
        0x0E02021F, 0x00020211, 0x00041000, 0x00008000,
        0, 0, 0, 0x02020202, 0x00200020, 0x00000204, 0x04000100, 0x00200020,
    };
    GString *r = g_string_new(res);

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    tsys_put(dir, "vendor", v, -1);
    tsys_put(dir, "device", d, -1);
    tsys_put(dir, "class", "0x020000\n", -1);
    tsys_put(dir, "irq", "0\n", -1);
    for (int i = 1; i < 7; i++) {
        g_string_append(r, "0x0000000000000000 0x0000000000000000 "
                        "0x0000000000000000\n");
    }
    tsys_put(dir, "resource", r->str, r->len);
    g_string_free(r, TRUE);
    config[0] = vendor;
    config[1] = vendor >> 8;
    config[2] = device;
    config[3] = device >> 8;
    config[4] = 0x06;           /* Command: memory, bus master (firmware) */
    tsys_put(dir, "config", config, config_size);
    memcpy((uint8_t *)bar + block_at, regs, sizeof(regs));
    /* counter 0 (PCIe cycles of endpoint 0) */
    ((uint8_t *)bar)[block_at + 0x8000] = 0x2a;
    tsys_put(dir, "resource0", bar, bar0_size);
}

static void setup(void)
{
    root = g_dir_make_tmp("ptl-sysfs-XXXXXX", NULL);
    g_assert_nonnull(root);
    g_setenv("PCIE_TELEMETRY_SYSFS", root, TRUE);
    add_function("0000:00:04.0", 0x1234, 0x0d7b, 4096, 0x20000, 0x10000);
    add_function("0000:00:05.0", 0x18ec, 0xc000, 256, 0x10000, 0);
    add_function("0000:00:06.0", 0x8086, 0x1234, 4096, 0x10000, 0);
}

static void test_list_default(void)
{
    ptl_find_opts o;
    ptl_card_info *cards;
    unsigned n;
    ptl_error e = { 0 };

    ptl_find_opts_init(&o);
    g_assert_cmpint(o.bar, ==, -1);
    g_assert_cmpint(o.offset, ==, -1);
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    /* 8086:1234 is not an NDK ID; the others are, in address order */
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpstr(cards[0].slot, ==, "0000:00:04.0");
    g_assert_cmpuint(cards[0].vendor, ==, 0x1234);
    g_assert_cmpuint(cards[0].device, ==, 0x0d7b);
    g_assert_false(cards[0].has_vsec);
    g_assert_cmpint(cards[0].endpoint, ==, -1);
    g_assert_cmpuint(cards[0].nnodes, ==, 0);
    g_assert_nonnull(strstr(cards[0].tree_error, "no NDK device tree"));
    g_assert_nonnull(strstr(cards[0].tree_error, "--bar"));
    g_assert_true(g_str_has_suffix(cards[0].sysfs, "/devices/0000:00:04.0"));
    g_assert_cmpstr(cards[1].slot, ==, "0000:00:05.0");
    g_assert_nonnull(strstr(cards[1].tree_error, "conventional PCI"));
    ptl_list_free(cards, n);
}

static void test_filters(void)
{
    const char *add[] = { "8086:1234", NULL };
    ptl_find_opts o;
    ptl_card_info *cards;
    unsigned n;
    ptl_error e = { 0 };

    ptl_find_opts_init(&o);
    o.extra_ids = add;
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 3);
    ptl_list_free(cards, n);

    ptl_find_opts_init(&o);
    o.id_filter = "18ec:";
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(cards[0].slot, ==, "0000:00:05.0");
    ptl_list_free(cards, n);

    o.id_filter = "10ee:9038";
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_E_NO_CARD);
    g_assert_nonnull(strstr(e.msg, "10ee:9038"));
    g_assert_nonnull(strstr(e.msg, "searched 3 PCI functions"));

    o.id_filter = "zz:1";
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_E_USAGE);

    /* a named function is taken whatever its vendor */
    ptl_find_opts_init(&o);
    o.device = "00:06";
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(cards[0].vendor, ==, 0x8086);
    ptl_list_free(cards, n);

    o.device = "00:07.0";
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_E_NO_CARD);
    g_assert_nonnull(strstr(e.msg, "00:07.0"));
}

/*
 * Arguments and paths longer than any fixed buffer are used whole: a -d
 * slot or an ID cut short could name another function, a cut sysfs path
 * another file.
 */
static void test_long_arguments(void)
{
    g_autofree char *zeros58 = g_strnfill(58, '0');
    g_autofree char *zeros118 = g_strnfill(118, '0');
    g_autofree char *slot = g_strconcat(zeros58, ":06.01", NULL);
    g_autofree char *id = g_strconcat(zeros118, "8086:12345", NULL);
    g_autofree char *name = g_strnfill(120, 'd');
    g_autofree char *deep = g_build_filename(root, name, NULL);
    g_autofree char *link = g_build_filename(deep, "devices", NULL);
    g_autofree char *target = g_build_filename(root, "devices", NULL);
    ptl_find_opts o;
    ptl_card_info *cards;
    unsigned n;
    ptl_error e = { 0 };

    /*
     * 64 characters, too long for libpci's parser; its first 63 would
     * name 00:06.0, which exists
     */
    ptl_find_opts_init(&o);
    o.device = slot;
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_E_USAGE);
    g_assert_nonnull(strstr(e.msg, ":06.01"));
    g_assert_nonnull(strstr(e.msg, "too long"));

    /* too long as well; its first 127 characters would be 8086:1234 */
    ptl_find_opts_init(&o);
    o.id_filter = id;
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_E_USAGE);

    /* a sysfs root whose device paths exceed 128 bytes */
    g_assert_cmpint(g_mkdir(deep, 0755), ==, 0);
    g_assert_cmpint(symlink(target, link), ==, 0);
    g_setenv("PCIE_TELEMETRY_SYSFS", deep, TRUE);
    ptl_find_opts_init(&o);
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_setenv("PCIE_TELEMETRY_SYSFS", root, TRUE);
    g_assert_cmpuint(n, ==, 2);
    g_assert_true(g_str_has_prefix(cards[0].sysfs, deep));
    g_assert_true(g_str_has_suffix(cards[0].sysfs, "/devices/0000:00:04.0"));
    g_assert_nonnull(strstr(cards[0].tree_error, "no NDK device tree"));
    g_assert_nonnull(strstr(cards[1].tree_error, "conventional PCI"));
    ptl_list_free(cards, n);
    g_remove(link);
    g_remove(deep);
}

static void test_no_card(void)
{
    ptl_find_opts o;
    ptl_handle *h;
    ptl_error e = { 0 };
    g_autofree char *empty = g_dir_make_tmp("ptl-empty-XXXXXX", NULL);
    g_autofree char *devs = g_build_filename(empty, "devices", NULL);

    g_assert_cmpint(g_mkdir(devs, 0755), ==, 0);
    g_setenv("PCIE_TELEMETRY_SYSFS", empty, TRUE);
    ptl_find_opts_init(&o);
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_NO_CARD);
    g_assert_null(h);
    g_assert_nonnull(strstr(e.msg, "searched 0 PCI functions for vendors "
                            "18ec, 1b26, 1bad, 1c2c"));
    g_assert_nonnull(strstr(e.msg, "-d"));
    g_setenv("PCIE_TELEMETRY_SYSFS", root, TRUE);
    tsys_rm_rf(empty);
}

static void test_open_without_tree(void)
{
    ptl_find_opts o;
    ptl_handle *h;
    ptl_error e = { 0 };

    ptl_find_opts_init(&o);
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "0000:00:04.0 has no NDK device tree"));
    g_assert_nonnull(strstr(e.msg, "--bar and --offset"));
    g_assert_null(strchr(e.msg, '\n'));
}

static void test_open_explicit(void)
{
    g_autofree char *path = g_build_filename(root, "devices",
                                             "0000:00:04.0", NULL);
    ptl_find_opts o;
    ptl_handle *h;
    ptl_error e = { 0 };
    ptl_reading *rd;

    ptl_find_opts_init(&o);
    o.device = path;            /* a sysfs path */
    o.bar = 0;
    o.offset = 0x10000;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_OK);
    g_assert_cmpstr(ptl_handle_card(h)->slot, ==, "0000:00:04.0");
    g_assert_cmpuint(ptl_handle_node(h)->bar, ==, 0);
    g_assert_cmpuint(ptl_handle_node(h)->offset, ==, 0x10000);
    g_assert_cmpuint(ptl_block_layout(ptl_handle_block(h))->entries, ==, 64);
    g_assert_cmpuint(ptl_block_layout(ptl_handle_block(h))->cnt_width, ==,
                     48);
    /* a reading through the mapping: the file answers as a still block */
    rd = ptl_reading_new(ptl_block_layout(ptl_handle_block(h)));
    g_assert_cmpint(ptl_handle_lock(h, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_block_read(ptl_handle_block(h), rd, &e), ==, PTL_OK);
    ptl_handle_unlock(h);
    g_assert_cmpuint(rd->counters[0], ==, 0x2a);
    g_assert_cmpuint(rd->counters[1], ==, 0);
    ptl_reading_free(rd);
    ptl_close(h);

    /*
     * memory decoding off (no firmware or driver enabled the function):
     * refused before mapping, with the way to turn it on
     */
    {
        g_autofree char *cfg = g_build_filename(path, "config", NULL);
        g_autofree char *config = NULL;
        gsize len;

        g_assert_true(g_file_get_contents(cfg, &config, &len, NULL));
        config[4] = 0x04;
        tsys_put(path, "config", config, len);
        g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_BAR);
        g_assert_true(g_str_has_prefix(e.msg, "0000:00:04.0 does not decode "
                                       "its BARs (the Memory Space bit of "
                                       "its Command register is clear"));
        g_assert_nonnull(strstr(e.msg, "; as root: echo 1 > "));
        g_assert_true(g_str_has_suffix(e.msg,
                                       "/devices/0000:00:04.0/enable"));
        config[4] = 0x06;
        tsys_put(path, "config", config, len);
    }

    /* the MAGIC is not at offset 0 */
    o.offset = 0;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_MAGIC);
}

static void test_open_bar_checks(void)
{
    ptl_find_opts o;
    ptl_handle *h;
    ptl_error e = { 0 };

    ptl_find_opts_init(&o);
    o.device = "0000:00:04.0";
    o.bar = 0;
    o.offset = 0x18000;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_BAR);
    g_assert_cmpstr(e.msg, ==, "BAR0 of 0000:00:04.0 is 0x20000 bytes, the "
                    "block needs 0x18000..0x28000");
    o.offset = 0x10004;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_BAR);
    o.bar = 1;
    o.offset = 0;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_BAR);
    g_assert_nonnull(strstr(e.msg, "BAR1"));
    o.bar = 6;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_USAGE);
    o.bar = 0;
    o.offset = -1;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_E_USAGE);
}

/* Two handles of one card share the resource file's lock. */
static void test_lock(void)
{
    ptl_find_opts o;
    ptl_handle *a, *b;
    ptl_error e = { 0 };

    ptl_find_opts_init(&o);
    o.device = "00:04.0";
    o.bar = 0;
    o.offset = 0x10000;
    g_assert_cmpint(ptl_open(&o, 0, &a, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_open(&o, 0, &b, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_handle_lock(a, &e), ==, PTL_OK);
    /* taking it twice is harmless */
    g_assert_cmpint(ptl_handle_lock(a, &e), ==, PTL_OK);
    ptl_handle_unlock(a);
    g_assert_cmpint(ptl_handle_lock(b, &e), ==, PTL_OK);
    ptl_handle_unlock(b);
    ptl_close(a);
    ptl_close(b);
}

/* Writes a 32-bit register of the block image in 00:04.0's resource0. */
static void poke(const char *dir, uint32_t off, uint32_t val)
{
    g_autofree char *p = g_build_filename(dir, "resource0", NULL);
    int fd = open(p, O_WRONLY);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(pwrite(fd, &val, 4, 0x10000 + off), ==, 4);
    close(fd);
}

/*
 * A hot-unplugged card: its sysfs directory goes, while the mapping still
 * answers (here with the old image, under QEMU with zeros), so only the
 * presence check can tell. A directory at the same place made later is
 * another device. Registers that read all ones are the other sign.
 */
static void test_gone(void)
{
    g_autofree char *dir = g_build_filename(root, "devices", "0000:00:04.0",
                                            NULL);
    g_autofree char *away = g_build_filename(root, "removed", NULL);
    ptl_find_opts o;
    ptl_handle *h;
    ptl_error e = { 0 };
    ptl_reading *rd;

    ptl_find_opts_init(&o);
    o.device = "00:04.0";
    o.bar = 0;
    o.offset = 0x10000;
    g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_OK);
    rd = ptl_reading_new(ptl_block_layout(ptl_handle_block(h)));
    g_assert_cmpint(ptl_handle_present(h, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_handle_lock(h, &e), ==, PTL_OK);
    g_assert_cmpint(ptl_handle_read(h, rd, &e), ==, PTL_OK);
    g_assert_cmpuint(rd->counters[0], ==, 0x2a);
    g_assert_cmpint(ptl_handle_clear(h, &e), ==, PTL_OK);
    ptl_handle_unlock(h);

    /* removed between two readings */
    g_assert_cmpint(g_rename(dir, away), ==, 0);
    memset(&e, 0, sizeof(e));
    g_assert_cmpint(ptl_handle_present(h, &e), ==, PTL_E_GONE);
    g_assert_cmpint(e.code, ==, PTL_E_GONE);
    g_assert_true(g_str_has_prefix(e.msg, "0000:00:04.0 disappeared ("));
    g_assert_nonnull(strstr(e.msg, dir));
    g_assert_null(strchr(e.msg, '\n'));
    g_assert_cmpint(ptl_handle_lock(h, &e), ==, PTL_OK);
    memset(&e, 0, sizeof(e));
    g_assert_cmpint(ptl_handle_read(h, rd, &e), ==, PTL_E_GONE);
    g_assert_true(g_str_has_prefix(e.msg, "0000:00:04.0 disappeared ("));
    g_assert_cmpint(ptl_handle_clear(h, &e), ==, PTL_E_GONE);
    ptl_handle_unlock(h);

    /* another device at the same address: a new directory */
    g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
    memset(&e, 0, sizeof(e));
    g_assert_cmpint(ptl_handle_present(h, &e), ==, PTL_E_GONE);
    g_assert_nonnull(strstr(e.msg, "added since"));
    g_assert_cmpint(g_rmdir(dir), ==, 0);

    /* the same directory back: the card is there */
    g_assert_cmpint(g_rename(away, dir), ==, 0);
    g_assert_cmpint(ptl_handle_read(h, rd, &e), ==, PTL_OK);

    /* present, but STATUS reads all ones: named after the card too */
    poke(dir, 0x24, 0xFFFFFFFF);
    memset(&e, 0, sizeof(e));
    g_assert_cmpint(ptl_handle_read(h, rd, &e), ==, PTL_E_GONE);
    g_assert_true(g_str_has_prefix(e.msg, "0000:00:04.0 disappeared ("));
    g_assert_nonnull(strstr(e.msg, "all ones"));
    g_assert_cmpint(ptl_handle_clear(h, &e), ==, PTL_E_GONE);
    poke(dir, 0x24, 0);
    g_assert_cmpint(ptl_handle_read(h, rd, &e), ==, PTL_OK);
    ptl_reading_free(rd);
    ptl_close(h);
}

/*
 * Gives the function at slot a PCI Express capability at 0x40: PCI
 * Express Capabilities flags, Link Capabilities, Link Status.
 */
static void set_express_cap(const char *slot, uint16_t flags,
                            uint32_t lnkcap, uint16_t lnksta)
{
    g_autofree char *dir = g_build_filename(root, "devices", slot, NULL);
    g_autofree char *p = g_build_filename(dir, "config", NULL);
    g_autofree char *config = NULL;
    gsize len;

    g_assert_true(g_file_get_contents(p, &config, &len, NULL));
    g_assert_cmpuint(len, >=, 256);
    config[0x06] |= 0x10;                   /* Status: capabilities list */
    config[0x34] = 0x40;
    config[0x40] = 0x10;                    /* PCI Express, the last one */
    config[0x41] = 0;
    memcpy(config + 0x42, &flags, 2);
    memcpy(config + 0x4c, &lnkcap, 4);
    memcpy(config + 0x52, &lnksta, 2);
    tsys_put(dir, "config", config, len);
}

static char *card_lines(const ptl_card_info *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    g_assert_nonnull(f);
    g_assert_cmpint(ptl_format_card_lines(f, c, "    "), ==, 0);
    g_assert_cmpint(fclose(f), ==, 0);
    return text;
}

static void test_link_decode(void)
{
    static const struct {
        uint16_t flags;
        bool present;
    } types[] = {
        { 0x0002, true },       /* endpoint */
        { 0x0012, true },       /* legacy endpoint */
        { 0x0042, true },       /* root port */
        { 0x0052, true },       /* switch upstream port */
        { 0x0001, true },       /* version 1 */
        { 0x0092, false },      /* root complex integrated endpoint */
        { 0x00a2, false },      /* root complex event collector */
        { 0xffff, false },      /* not answering */
    };
    static const char *const speeds[] = {
        NULL, "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s",
        "64 GT/s", NULL,
    };
    ptl_link link;

    for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
        memset(&link, 0x5a, sizeof(link));
        /* 16 GT/s x16 and more bits; running 8 GT/s x8 */
        ptl_link_decode(types[i].flags, 0x0047e104, 0x1083, &link);
        g_assert_cmpint(link.present, ==, types[i].present);
        g_assert_cmpuint(link.speed, ==, types[i].present ? 3 : 0);
        g_assert_cmpuint(link.width, ==, types[i].present ? 8 : 0);
        g_assert_cmpuint(link.max_speed, ==, types[i].present ? 4 : 0);
        g_assert_cmpuint(link.max_width, ==, types[i].present ? 16 : 0);
    }
    /* the fields as they are, reserved values too */
    ptl_link_decode(0x0002, 0x3ff, 0x3ff, &link);
    g_assert_cmpuint(link.width, ==, 63);
    g_assert_cmpuint(link.max_width, ==, 63);
    g_assert_cmpuint(link.speed, ==, 15);
    for (unsigned k = 0; k < G_N_ELEMENTS(speeds); k++) {
        g_assert_cmpstr(ptl_link_speed_text(k), ==, speeds[k]);
    }
    g_assert_null(ptl_link_speed_text(UINT_MAX));
}

static void test_link_lines(void)
{
    ptl_card_info *c = g_new0(ptl_card_info, 1);
    char *text;

    text = card_lines(c);
    g_assert_cmpstr(text, ==, "");
    free(text);
    ptl_link_decode(0x0002, 0x0044, 0x1044, &c->link);
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "    link 16 GT/s x4\n");
    free(text);
    ptl_link_decode(0x0002, 0x0106, 0x1081, &c->link);
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "    link 2.5 GT/s x8 (max 64 GT/s x16)\n");
    free(text);
    /* a slower link of the same width, a narrower one of the same speed */
    ptl_link_decode(0x0002, 0x0205, 0x0204, &c->link);
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "    link 16 GT/s x32 (max 32 GT/s x32)\n");
    free(text);
    ptl_link_decode(0x0002, 0x0082, 0x0012, &c->link);
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "    link 5 GT/s x1 (max 5 GT/s x8)\n");
    free(text);
    /* codes no specification has yet, a link that is down */
    ptl_link_decode(0x0002, 0x0087, 0x0000, &c->link);
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "    link unknown speed x0 (max unknown "
                    "speed x8)\n");
    free(text);
    g_free(c);
}

/* ptl_list reads the link of every card it lists, tree or not. */
static void test_link_list(void)
{
    ptl_find_opts o;
    ptl_card_info *cards;
    unsigned n;
    ptl_error e = { 0 };
    char *text;

    set_express_cap("0000:00:04.0", 0x0002, 0x0000e104, 0x1083);
    ptl_find_opts_init(&o);
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_true(cards[0].link.present);
    g_assert_cmpuint(cards[0].link.speed, ==, 3);
    g_assert_cmpuint(cards[0].link.width, ==, 8);
    g_assert_cmpuint(cards[0].link.max_speed, ==, 4);
    g_assert_cmpuint(cards[0].link.max_width, ==, 16);
    /* no capability list: no link, and no line */
    g_assert_false(cards[1].link.present);
    text = card_lines(&cards[0]);
    g_assert_cmpstr(text, ==, "    link 8 GT/s x8 (max 16 GT/s x16)\n");
    free(text);
    text = card_lines(&cards[1]);
    g_assert_cmpstr(text, ==, "");
    free(text);
    /* no device tree: no firmware either */
    g_assert_cmpstr(cards[0].firmware.card_name, ==, "");
    g_assert_false(cards[0].firmware.has_build_time);
    ptl_list_free(cards, n);

    /* an integrated endpoint on the root bus has no link */
    set_express_cap("0000:00:04.0", 0x0092, 0x0000e104, 0x1083);
    g_assert_cmpint(ptl_list(&o, &cards, &n, &e), ==, PTL_OK);
    g_assert_false(cards[0].link.present);
    ptl_list_free(cards, n);

    /* ptl_open's card has it too */
    set_express_cap("0000:00:04.0", 0x0002, 0x00000041, 0x1041);
    {
        ptl_handle *h;

        o.device = "00:04.0";
        o.bar = 0;
        o.offset = 0x10000;
        g_assert_cmpint(ptl_open(&o, 0, &h, &e), ==, PTL_OK);
        g_assert_true(ptl_handle_card(h)->link.present);
        g_assert_cmpuint(ptl_handle_card(h)->link.speed, ==, 1);
        g_assert_cmpuint(ptl_handle_card(h)->link.width, ==, 4);
        ptl_close(h);
    }
}

int main(int argc, char **argv)
{
    int r;

    g_test_init(&argc, &argv, NULL);
    setup();
    g_test_add_func("/ptl-find/list-default", test_list_default);
    g_test_add_func("/ptl-find/filters", test_filters);
    g_test_add_func("/ptl-find/no-card", test_no_card);
    g_test_add_func("/ptl-find/long-arguments", test_long_arguments);
    g_test_add_func("/ptl-find/open-without-tree", test_open_without_tree);
    g_test_add_func("/ptl-find/open-explicit", test_open_explicit);
    g_test_add_func("/ptl-find/open-bar-checks", test_open_bar_checks);
    g_test_add_func("/ptl-find/lock", test_lock);
    g_test_add_func("/ptl-find/gone", test_gone);
    g_test_add_func("/ptl-find/link-decode", test_link_decode);
    g_test_add_func("/ptl-find/link-lines", test_link_lines);
    g_test_add_func("/ptl-find/link-list", test_link_list);
    r = g_test_run();
    tsys_rm_rf(root);
    g_free(root);
    return r;
}
