/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What --list says about a card besides its telemetry blocks: its PCI
 * Express link, as lspci and nfb-info show it, and its firmware's identity
 * from the device tree, as nfb-info shows it. The registers are read in
 * ptl-find.c, the tree in ptl-devtree.c; this file decodes and words them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pci/header.h>

#include "pcie-telemetry.h"

static const char *const link_speeds[] = {
    NULL, "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "64 GT/s",
};

const char *ptl_link_speed_text(unsigned speed)
{
    if (speed >= sizeof(link_speeds) / sizeof(link_speeds[0])) {
        return NULL;
    }
    return link_speeds[speed];
}

void ptl_link_decode(uint16_t flags, uint32_t lnkcap, uint16_t lnksta,
                     ptl_link *link)
{
    unsigned type = (flags & PCI_EXP_FLAGS_TYPE) >> 4;

    memset(link, 0, sizeof(*link));
    /*
     * Integrated endpoints and event collectors sit in the root complex:
     * their link registers are reserved (lspci shows no link for them).
     * All ones: the function stopped answering.
     */
    if (flags == 0xffff || type == PCI_EXP_TYPE_ROOT_INT_EP ||
        type == PCI_EXP_TYPE_ROOT_EC) {
        return;
    }
    link->present = true;
    link->speed = lnksta & PCI_EXP_LNKSTA_SPEED;
    link->width = (lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4;
    link->max_speed = lnkcap & PCI_EXP_LNKCAP_SPEED;
    link->max_width = (lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4;
}

/* Collects the parts of one line; a failed write is kept for the end. */
typedef struct line {
    FILE *f;
    const char *indent;
    bool started, failed;
} line;

static void __attribute__((format(printf, 3, 4)))
part(line *l, const char *sep, const char *fmt, ...)
{
    va_list ap;

    if (fprintf(l->f, "%s", l->started ? sep : l->indent) < 0) {
        l->failed = true;
    }
    l->started = true;
    va_start(ap, fmt);
    if (vfprintf(l->f, fmt, ap) < 0) {
        l->failed = true;
    }
    va_end(ap);
}

/* Ends the line if it has a part; false if any write failed. */
static bool end_line(line *l)
{
    bool ok = !l->failed;

    if (l->started && fputc('\n', l->f) == EOF) {
        ok = false;
    }
    l->started = false;
    l->failed = false;
    return ok;
}

static void speed_part(line *l, const char *sep, const char *prefix,
                       unsigned speed, unsigned width)
{
    const char *text = ptl_link_speed_text(speed);

    part(l, sep, "%s%s x%u", prefix, text ? text : "unknown speed", width);
}

static void build_time_text(uint32_t t, char *buf, size_t len)
{
    time_t when = (time_t)t;
    struct tm tm;

    if (!localtime_r(&when, &tm) ||
        strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm) == 0) {
        snprintf(buf, len, "at unix time %u", t);
    }
}

int ptl_format_card_lines(FILE *f, const ptl_card_info *c,
                          const char *indent)
{
    const ptl_link *k = &c->link;
    const ptl_firmware_info *fw = &c->firmware;
    line l = { .f = f, .indent = indent };
    bool ok = true;

    if (k->present) {
        speed_part(&l, "", "link ", k->speed, k->width);
        if (k->speed != k->max_speed || k->width != k->max_width) {
            speed_part(&l, " ", "(max ", k->max_speed, k->max_width);
            part(&l, "", ")");
        }
    }
    ok &= end_line(&l);

    if (fw->card_name[0]) {
        part(&l, ", ", "card %s", fw->card_name);
    }
    if (fw->serial_number[0]) {
        part(&l, ", ", "serial %s", fw->serial_number);
    }
    if (fw->project_name[0]) {
        part(&l, ", ", "project %s", fw->project_name);
    }
    if (fw->project_version[0]) {
        part(&l, fw->project_name[0] ? " " : ", ", "%s%s",
             fw->project_name[0] ? "" : "project version ",
             fw->project_version);
    }
    if (fw->project_variant[0]) {
        if (fw->project_name[0] || fw->project_version[0]) {
            part(&l, " ", "(variant %s)", fw->project_variant);
        } else {
            part(&l, ", ", "project variant %s", fw->project_variant);
        }
    }
    ok &= end_line(&l);

    if (fw->has_build_time || fw->build_author[0] || fw->build_tool[0]) {
        part(&l, ", ", "built");
        if (fw->has_build_time) {
            char when[64];

            build_time_text(fw->build_time, when, sizeof(when));
            part(&l, " ", "%s", when);
        }
        if (fw->build_author[0]) {
            part(&l, " ", "by %s", fw->build_author);
        }
        if (fw->build_tool[0]) {
            part(&l, " ", "with %s", fw->build_tool);
        }
    }
    if (fw->build_revision[0]) {
        part(&l, ", ", "revision %s", fw->build_revision);
    }
    ok &= end_line(&l);
    return ok ? 0 : -1;
}
