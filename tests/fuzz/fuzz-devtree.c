/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tool's device-tree path as a card drives it: ptl_devtree_read with a
 * configuration space that answers from the input, so the card may return
 * anything (the scan found the VSEC, everything after that is the card's).
 *
 * The firmware's identity read from the tree must come out as text that
 * fits its buffers and holds no control character.
 *
 * Input: the endpoint register (LE 32 bits), the tree length register,
 * then word i of the tree as the data register returns it after index i is
 * selected, 0 past the input's end (as the virtual card does). Shorter than
 * 8 bytes: the registers cannot be read. The words are also walked as a raw
 * flattened device tree, since a fuzzer seldom gets a mutated tree through
 * the XZ stream's CRCs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

#define CAP             0x100   /* where the virtual card has its VSEC */
#define REG_ENDPOINT    0x08
#define REG_LENGTH      0x0C
#define REG_INDEX       0x10
#define REG_DATA        0x14

typedef struct card {
    const uint8_t *data;
    size_t size;
    uint32_t index;
    bool selected;
} card;

static uint32_t word_at(const card *c, uint64_t at)
{
    uint32_t w = 0;

    for (unsigned k = 0; k < 4; k++) {
        if (at + k < c->size) {
            w |= (uint32_t)c->data[at + k] << (8 * k);
        }
    }
    return w;
}

static bool card_read32(void *opaque, uint32_t offset, uint32_t *value)
{
    card *c = opaque;

    switch (offset) {
    case CAP + REG_ENDPOINT:
    case CAP + REG_LENGTH:
        if (c->size < 8) {
            return false;
        }
        *value = word_at(c, offset - CAP - REG_ENDPOINT);
        return true;
    case CAP + REG_DATA:
        /* the reader must select a word before each read of one */
        if (!c->selected) {
            abort();
        }
        c->selected = false;
        *value = word_at(c, 8 + (uint64_t)c->index * 4);
        return true;
    default:
        abort();                /* no other register is the reader's */
    }
}

static bool card_write32(void *opaque, uint32_t offset, uint32_t value)
{
    card *c = opaque;

    if (offset != CAP + REG_INDEX) {
        abort();
    }
    c->index = value;
    c->selected = true;
    return true;
}

static const char *card_error(void *opaque)
{
    return "the card does not answer";
}

static const ptl_config_ops card_ops = {
    .read32 = card_read32,
    .write32 = card_write32,
    .error = card_error,
};

static void check_nodes(const ptl_node_info *nodes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (nodes[i].bar > 5 ||
            !memchr(nodes[i].path, '\0', sizeof(nodes[i].path))) {
            abort();
        }
    }
}

/* Every string ends inside its buffer and holds no control character. */
static void check_text(const char *s)
{
    const char *end = memchr(s, '\0', PTL_FIRMWARE_TEXT);

    if (!end) {
        abort();
    }
    for (; s < end; s++) {
        unsigned char b = *s;

        /* C0 controls, DEL, and C1 controls in UTF-8 (0xC2 0x80-0x9F) */
        if (b < 0x20 || b == 0x7f ||
            (b == 0xc2 && (unsigned char)s[1] >= 0x80 &&
             (unsigned char)s[1] < 0xa0)) {
            abort();
        }
    }
}

static void check_firmware(const ptl_firmware_info *fw)
{
    check_text(fw->card_name);
    check_text(fw->project_name);
    check_text(fw->project_variant);
    check_text(fw->project_version);
    check_text(fw->build_tool);
    check_text(fw->build_author);
    check_text(fw->build_revision);
    check_text(fw->serial_number);
}

static void check_error(const ptl_error *e)
{
    if (!memchr(e->msg, '\0', sizeof(e->msg)) || e->msg[0] == '\0') {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    card c = { .data = data, .size = size };
    ptl_node_info *nodes;
    ptl_firmware_info fw;
    ptl_error e = { 0 };
    unsigned n;
    int endpoint;
    ptl_err r;

    r = ptl_devtree_read(&card_ops, &c, CAP, "0000:01:00.0", &endpoint,
                         &nodes, &n, &fw, &e);
    check_firmware(&fw);
    if (endpoint < -1 || endpoint > 15) {
        abort();
    }
    if (r == PTL_OK) {
        if (n == 0 || !nodes) {
            abort();
        }
        check_nodes(nodes, n);
    } else {
        if (n != 0 || nodes) {
            abort();
        }
        check_error(&e);
    }
    free(nodes);

    /* the words as a tree that was never compressed */
    if (size > 8) {
        uint8_t *fdt = malloc(size - 8);

        if (!fdt) {
            return 0;
        }
        memcpy(fdt, data + 8, size - 8);
        r = ptl_devtree_nodes(fdt, size - 8, endpoint < 0 ? 0 : endpoint,
                              &nodes, &n, &e);
        if (r == PTL_OK) {
            check_nodes(nodes, n);
        } else {
            check_error(&e);
        }
        free(nodes);
        ptl_devtree_firmware(fdt, size - 8, &fw);
        check_firmware(&fw);
        free(fdt);
    }
    return 0;
}
