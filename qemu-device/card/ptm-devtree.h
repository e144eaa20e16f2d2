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
 * The firmware's identity: string properties of /firmware as NDK firmware
 * sets them (ndk-fpga's DevTree.tcl) and nfb-info shows them. A NULL or
 * empty string leaves the property out, as firmware built without it.
 */
typedef struct PtmFirmwareId {
    const char *card_name;
    const char *project_name;
    const char *project_variant;
    const char *project_version;
    uint32_t build_time;        /* seconds since 1970-01-01 00:00 UTC */
    const char *build_tool;
    const char *build_author;
    const char *build_revision;
} PtmFirmwareId;

/* The identity strings hold at most this many characters. */
#define PTM_FW_STRING_MAX       127

/*
 * This model's version: its meson project version (test-devtree checks
 * that the two agree); the default project-version.
 */
#define PTM_MODEL_VERSION       "0.1.0"
/*
 * Default build-time: 2026-12-02 12:42:14 UTC, when version 0.1.0 was set;
 * fixed, so that every run of a version shows the same tree.
 */
#define PTM_MODEL_BUILD_TIME    1796215334u
#define PTM_MODEL_PROJECT_NAME  "ndk-pcie-telemetry"
#define PTM_MODEL_BUILD_AUTHOR  "ndk-pcie-telemetry developers"
/*
 * Default build-tool: QEMU without its version. The string is
 * guest-visible and in the tree's CRC that migration compares, so a QEMU
 * version in it would change the guest ABI with every QEMU release and
 * stop a default card from migrating between two; the model's own name
 * and version are project-name and project-version already.
 */
#define PTM_MODEL_BUILD_TOOL    "QEMU"
/* card-name of a PCI ID the nfb driver does not name */
#define PTM_MODEL_CARD_NAME     "QEMU-NDK-TELEMETRY"

/*
 * The card name the nfb driver gives the main function of a card with
 * this PCI ID (nfb_ids in drivers/kernel/drivers/nfb/pci.c of ndk-sw,
 * e.g. COMBO-GENERIC for 18ec:c000), and PTM_MODEL_CARD_NAME for any
 * other ID. With the same card-name in the tree nfb-info shows what it
 * shows for a tree without one, where the driver adds its own name.
 */
const char *ptm_devtree_card_name(uint32_t vendor_id, uint32_t device_id);

/*
 * NULL if s may be an identity string (at most PTM_FW_STRING_MAX
 * characters, each printable ASCII, 0x20 to 0x7e), otherwise a g_malloc'd
 * reason it may not: "has 128 characters", "has the byte 0x0a at
 * offset 3".
 */
char *ptm_devtree_check_string(const char *s);

/*
 * The XZ-compressed tree for a block at block_offset in BAR0 with the given
 * VERSION value and number of PCIe endpoints, and the firmware identity id
 * on /firmware (none for NULL). Returns a g_malloc'd buffer and its length
 * in *xz_len, or NULL with a g_malloc'd message in *errmsg. The same
 * inputs give the same bytes (both ends of a migration agree).
 */
uint8_t *ptm_devtree_build_id(const PtmFirmwareId *id, uint32_t block_offset,
                              uint32_t version, uint32_t pcie_endpoints,
                              size_t *xz_len, char **errmsg);

/*
 * The NDK DMA engine in the tree (ndp-dma.h): `queues` RX and TX queues on
 * each of `ports` DMA ports, their controllers' windows at rx_base and
 * tx_base (0x80 bytes a queue), one generator/loopback switch per port at
 * gls_base (0x200 bytes a port), with the nodes NDK firmware gives them.
 */
typedef struct PtmDevtreeDma {
    unsigned ports;
    unsigned queues;            /* per port and direction; 0: no engine */
    uint32_t rx_base, tx_base, gls_base;
} PtmDevtreeDma;

#define PTM_DT_DMA_RX_COMPATIBLE    "netcope,dma_ctrl_ndp_rx"
#define PTM_DT_DMA_TX_COMPATIBLE    "netcope,dma_ctrl_ndp_tx"
#define PTM_DT_DMA_VERSION          0x00020000u     /* Medusa */
#define PTM_DT_GLS_COMPATIBLE       "cesnet,ofm,gen_loop_switch"
#define PTM_DT_GEN_COMPATIBLE       "cesnet,ofm,mfb_generator"

/* As ptm_devtree_build_id, with the DMA engine dma (none for NULL). */
uint8_t *ptm_devtree_build_dma(const PtmFirmwareId *id,
                               const PtmDevtreeDma *dma,
                               uint32_t block_offset, uint32_t version,
                               uint32_t pcie_endpoints, size_t *xz_len,
                               char **errmsg);

/*
 * The PG381 performance traffic generator (docs/pg381.md): its window at
 * `base` in BAR0, `size` bytes, run by a clock of clock_hz. NDK's tools
 * do not know it; the node lets software find it as it finds the rest.
 */
typedef struct PtmDevtreePg381 {
    uint32_t base, size;
    uint32_t clock_hz;
} PtmDevtreePg381;

#define PTM_DT_PG381_COMPATIBLE     "xlnx,perf-axi-tg-1.0"

/* As ptm_devtree_build_dma, with the PG381 generator pg381 (none: NULL). */
uint8_t *ptm_devtree_build_card(const PtmFirmwareId *id,
                                const PtmDevtreeDma *dma,
                                const PtmDevtreePg381 *pg381,
                                uint32_t block_offset, uint32_t version,
                                uint32_t pcie_endpoints, size_t *xz_len,
                                char **errmsg);

/* As ptm_devtree_build_id without a firmware identity. */
uint8_t *ptm_devtree_build(uint32_t block_offset, uint32_t version,
                           uint32_t pcie_endpoints, size_t *xz_len,
                           char **errmsg);

/*
 * Word index of the stream as the VSEC data register returns it: bytes
 * 4 index to 4 index + 3, little endian, zeros past the end.
 */
uint32_t ptm_devtree_word(const uint8_t *xz, size_t xz_len, uint32_t index);

#endif
