/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free builder of the NDK device tree the virtual card offers in its
 * device-tree VSEC: a flattened device tree describing the telemetry block
 * inside BAR0, compressed as an XZ stream the Linux kernel's XZ decoder and
 * the NDK driver accept.
 */
#ifndef PTM_DEVTREE_H
#define PTM_DEVTREE_H

#include <stddef.h>
#include <stdint.h>

/* The device-tree VSEC (PCI extended capability ID 0x000B, version 1) */
#define PTM_VSEC_CAP_ID         0x000B
#define PTM_VSEC_CAP_VER        1
#define PTM_VSEC_OFFSET         0x100   /* in configuration space */
#define PTM_VSEC_SIZE           0x20
/* dword at +4: VSEC ID 0x0d7b, revision 1, length 0x20 */
#define PTM_VSEC_HEADER         0x02010D7Bu
#define PTM_VSEC_REG_HEADER     0x04
#define PTM_VSEC_REG_ENDPOINT   0x08    /* bit 31: bits 3..0 hold the index */
#define PTM_VSEC_REG_LENGTH     0x0C    /* bytes of the XZ stream */
#define PTM_VSEC_REG_INDEX      0x10    /* word index, read/write */
#define PTM_VSEC_REG_DATA       0x14    /* word <index> of the stream */
#define PTM_VSEC_ENDPOINT_VALID 0x80000000u

/* Strings and sizes of the tree */
#define PTM_DT_BUS_COMPATIBLE   "netcope,bus,mi"
#define PTM_DT_BUS_RESOURCE     "PCI0,BAR0"
#define PTM_DT_COMPATIBLE       "cesnet,ofm,pcie_telemetry_mi"
#define PTM_DT_REG_SIZE         0x10000u
/* the LZMA2 dictionary; decoders must not need more than 1 MiB */
#define PTM_DT_XZ_DICT          (64u * 1024)

/*
 * The XZ-compressed tree for a block at block_offset in BAR0 with the given
 * VERSION value and number of PCIe endpoints. Returns a g_malloc'd buffer
 * and its length in *xz_len, or NULL with a g_malloc'd message in *errmsg.
 * The same inputs give the same bytes (both ends of a migration agree).
 */
uint8_t *ptm_devtree_build(uint32_t block_offset, uint32_t version,
                           uint32_t pcie_endpoints, size_t *xz_len,
                           char **errmsg);

/*
 * Word index of the stream as the VSEC data register returns it: bytes
 * 4 index to 4 index + 3, little endian, zeros past the end.
 */
uint32_t ptm_devtree_word(const uint8_t *xz, size_t xz_len, uint32_t index);

#endif
