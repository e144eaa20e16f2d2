/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ndk-pcie-telemetry's PCI configuration space: the settings the host
 * negotiates, the PCIe, MSI and device-tree VSEC capabilities, their
 * reset, and the check of the device's properties and identity.
 */
#include "ndk-card.h"
#include "hw/pci/pci_bridge.h"
static PtmSettings ndk_telemetry_settings(NdkPcieTelemetryState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    PtmSettings set = { .mps = 0, .mrrs = 2 };

    if (pci_is_express(pdev) && pdev->exp.exp_cap) {
        uint8_t *cap = pdev->config + pdev->exp.exp_cap;
        uint16_t devctl = pci_get_word(cap + PCI_EXP_DEVCTL);
        uint16_t devctl2 = pci_get_word(cap + PCI_EXP_DEVCTL2);
        uint16_t lnkctl = pci_get_word(cap + PCI_EXP_LNKCTL);

        set.mps = (devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5;
        set.mrrs = (devctl & PCI_EXP_DEVCTL_READRQ) >> 12;
        set.ext_tag = !!(devctl & PCI_EXP_DEVCTL_EXT_TAG);
        set.tag_10bit = !!(devctl2 & EXP_DEVCTL2_10BIT_TAG_REQ);
        set.rcb_128 = !!(lnkctl & PCI_EXP_LNKCTL_RCB);
    }
    return set;
}

void ndk_telemetry_sync_settings(NdkPcieTelemetryState *s)
{
    PtmSettings set = ndk_telemetry_settings(s);

    /* the generator's transfers so far were split by the old ones */
    ndk_pg381_advance(s, now_ns());
    /* the DMA engine's transfers are split by them too */
    s->settings = set;
    ndk_pg381_set_pcie(s);
    if (s->dma_log) {
        ptm_dma_traffic_set_settings(s->dma_log, now_ns(), &set);
    }
    /* every endpoint of the block reports what this function negotiated */
    for (unsigned e = 0; e < s->cfg.pcie_endpoints; e++) {
        ptm_core_set_settings(s->core, now_ns(), e, &set);
    }
}

/*
 * The data register of the device-tree VSEC returns word <index> of the
 * stream; it is computed here so that config space only holds the index,
 * which migrates with the rest of it.
 */
uint32_t ndk_telemetry_config_read(PCIDevice *pdev, uint32_t addr,
                                          int len)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(pdev);
    uint32_t val = pci_default_read_config(pdev, addr, len);
    uint32_t data = s->vsec + PTM_VSEC_REG_DATA;
    uint32_t index, word;

    val = flit_pci_config_read(&s->flit, addr, len, val);
    if (!s->vsec || !ranges_overlap(addr, len, data, 4)) {
        return val;
    }
    index = pci_get_long(pdev->config + s->vsec + PTM_VSEC_REG_INDEX);
    word = ptm_devtree_word(s->devtree_xz, s->devtree_len, index);
    trace_ptm_devtree_read(index, word);
    for (int i = 0; i < len; i++) {
        if (addr + i >= data && addr + i < data + 4) {
            val = deposit32(val, 8 * i, 8, word >> (8 * (addr + i - data)));
        }
    }
    return val;
}

void ndk_telemetry_config_write(PCIDevice *pdev, uint32_t addr,
                                       uint32_t val, int len)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(pdev);

    ndk_telemetry_quiesce(s);
    pci_default_write_config(pdev, addr, val, len);
    flit_pci_config_write(&s->flit, addr, val, len);
    ndk_telemetry_sync_settings(s);
}

/* The identity strings: printable ASCII of bounded length. */
static bool ndk_telemetry_check_id(NdkPcieTelemetryState *s, Error **errp)
{
    const struct {
        const char *name;
        const char *value;
    } props[] = {
        { "card-name", s->card_name },
        { "project-name", s->project_name },
        { "project-variant", s->project_variant },
        { "project-version", s->project_version },
        { "build-tool", s->build_tool },
        { "build-author", s->build_author },
        { "build-revision", s->build_revision },
    };

    for (size_t i = 0; i < ARRAY_SIZE(props); i++) {
        g_autofree char *why = NULL;

        if (!props[i].value) {
            continue;
        }
        why = ptm_devtree_check_string(props[i].value);
        if (why) {
            error_setg(errp, "%s: property '%s' %s; allowed: up to %d "
                       "printable ASCII characters (0x20 to 0x7e), empty "
                       "leaves it out of the device tree",
                       TYPE_NDK_PCIE_TELEMETRY, props[i].name, why,
                       PTM_FW_STRING_MAX);
            return false;
        }
    }
    return true;
}


/* Whether the traffic object is background transfers of the DMA engine */
static bool ndk_telemetry_background(NdkPcieTelemetryState *s)
{
    return s->traffic &&
           TELEMETRY_TRAFFIC_GET_CLASS(s->traffic)->model ==
           &ptm_model_transfers;
}
bool ndk_telemetry_check_props(NdkPcieTelemetryState *s, Error **errp)
{
    g_autofree char *err = ptm_config_check(&s->cfg);

    if (err) {
        error_setg(errp, "%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return false;
    }
    if (s->vendor_id > 0xFFFF || s->vendor_id == 0 ||
        s->vendor_id == 0xFFFF) {
        error_setg(errp, "%s: property 'vendor-id' is 0x%x, allowed: 0x0001 "
                   "to 0xfffe", TYPE_NDK_PCIE_TELEMETRY, s->vendor_id);
        return false;
    }
    if (s->device_id > 0xFFFF) {
        error_setg(errp, "%s: property 'device-id' is 0x%x, allowed: 0x0000 "
                   "to 0xffff", TYPE_NDK_PCIE_TELEMETRY, s->device_id);
        return false;
    }
    if (s->max_payload < 128 || s->max_payload > 4096 ||
        !is_power_of_2(s->max_payload)) {
        error_setg(errp, "%s: property 'max-payload-size' is %u, allowed: "
                   "128, 256, 512, 1024, 2048 or 4096",
                   TYPE_NDK_PCIE_TELEMETRY, s->max_payload);
        return false;
    }
    if (!s->fpga_device ||
        (strcmp(s->fpga_device, "AGILEX") &&
         strcmp(s->fpga_device, "STRATIX10") &&
         strcmp(s->fpga_device, "ULTRASCALE") &&
         strcmp(s->fpga_device, "7SERIES"))) {
        error_setg(errp, "%s: property 'device' is '%s', allowed: AGILEX, "
                   "STRATIX10, ULTRASCALE or 7SERIES", TYPE_NDK_PCIE_TELEMETRY,
                   s->fpga_device ? s->fpga_device : "");
        return false;
    }
    if (!ndk_telemetry_check_id(s, errp)) {
        return false;
    }
    if (s->block_offset % 0x1000 ||
        s->block_offset > NDK_TELEMETRY_MAX_BLOCK_OFFSET) {
        error_setg(errp, "%s: property 'block-offset' is 0x%x, allowed: a "
                   "multiple of 0x1000 from 0 to 0x%08x",
                   TYPE_NDK_PCIE_TELEMETRY, s->block_offset,
                   NDK_TELEMETRY_MAX_BLOCK_OFFSET);
        return false;
    }
    if ((uint64_t)s->dma_queues * s->cfg.dma_ports > NDP_MAX_QUEUES) {
        error_setg(errp, "%s: property 'dma-queues' is %u, allowed: 0 to %u "
                   "(at most %u RX and %u TX queues over all %u DMA ports)",
                   TYPE_NDK_PCIE_TELEMETRY, s->dma_queues,
                   NDP_MAX_QUEUES / s->cfg.dma_ports, NDP_MAX_QUEUES,
                   NDP_MAX_QUEUES, s->cfg.dma_ports);
        return false;
    }
    if (s->dma_queues && s->traffic && !ndk_telemetry_background(s)) {
        error_setg(errp, "%s: property 'traffic' is a %s, which cannot be "
                   "combined with 'dma-queues': a card with a DMA engine "
                   "counts the engine's own transfers, with background "
                   "transfers of a telemetry-traffic-transfers object at "
                   "most", TYPE_NDK_PCIE_TELEMETRY,
                   object_get_typename(OBJECT(s->traffic)));
        return false;
    }
    if (s->pg381_present && s->traffic && !ndk_telemetry_background(s)) {
        error_setg(errp, "%s: property 'traffic' is a %s, which cannot be "
                   "combined with 'pg381': a card with the PG381 generator "
                   "counts the generator's own transfers, with background "
                   "transfers of a telemetry-traffic-transfers object at "
                   "most", TYPE_NDK_PCIE_TELEMETRY,
                   object_get_typename(OBJECT(s->traffic)));
        return false;
    }
    if (!s->dma_queues && !s->pg381_present && s->traffic &&
        ndk_telemetry_background(s)) {
        error_setg(errp, "%s: property 'traffic' is a "
                   "telemetry-traffic-transfers, background transfers of "
                   "the DMA engine, which needs 'dma-queues' of at least 1 "
                   "(or 'pg381=on')", TYPE_NDK_PCIE_TELEMETRY);
        return false;
    }
    if (!ndk_pg381_check_props(s, errp)) {
        return false;
    }
    if (s->dma_queues && s->block_offset + PTM_BAR_SIZE > NDP_BAR_RX_BASE &&
        s->block_offset < NDP_BAR_END(s->cfg.dma_ports)) {
        error_setg(errp, "%s: property 'block-offset' is 0x%x, which "
                   "overlaps the DMA engine of 'dma-queues' at 0x%08x to "
                   "0x%08x; allowed: up to 0x%08x or from 0x%08x",
                   TYPE_NDK_PCIE_TELEMETRY, s->block_offset, NDP_BAR_RX_BASE,
                   NDP_BAR_END(s->cfg.dma_ports) - 1,
                   NDP_BAR_RX_BASE - PTM_BAR_SIZE,
                   ROUND_UP(NDP_BAR_END(s->cfg.dma_ports), 0x1000));
        return false;
    }
    return true;
}

int ndk_telemetry_init_pcie(NdkPcieTelemetryState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *cap, *wmask;
    int pos;

    pos = pcie_endpoint_cap_init(pdev, NDK_TELEMETRY_PCIE_OFFSET);
    if (pos < 0) {
        error_setg(errp, "%s: cannot add the PCIe capability",
                   TYPE_NDK_PCIE_TELEMETRY);
        return pos;
    }
    cap = pdev->config + pos;
    wmask = pdev->wmask + pos;
    /* what the card supports (QEMU sets Extended Tag on its own) */
    pci_long_test_and_clear_mask(cap + PCI_EXP_DEVCAP,
                                 PCI_EXP_DEVCAP_PAYLOAD |
                                 PCI_EXP_DEVCAP_EXT_TAG);
    pci_long_test_and_set_mask(cap + PCI_EXP_DEVCAP,
                               ctz32(s->max_payload / 128) |
                               (s->ext_tag ? PCI_EXP_DEVCAP_EXT_TAG : 0));
    if (s->tag_10bit) {
        /* a 10-bit tag requester must also complete 10-bit tags */
        pci_long_test_and_set_mask(cap + PCI_EXP_DEVCAP2,
                                   EXP_DEVCAP2_10BIT_TAG_REQ |
                                   EXP_DEVCAP2_10BIT_TAG_COMP);
    }
    /* what the host programs */
    pci_word_test_and_set_mask(wmask + PCI_EXP_DEVCTL,
                               PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ |
                               (s->ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0));
    if (s->tag_10bit) {
        pci_word_test_and_set_mask(wmask + PCI_EXP_DEVCTL2,
                                   EXP_DEVCTL2_10BIT_TAG_REQ);
    }
    pci_word_test_and_set_mask(wmask + PCI_EXP_LNKCTL, PCI_EXP_LNKCTL_RCB);
    /*
     * The link: QEMU trains none, so Link Status reports the card's
     * maximum speed and width as if the slot offered both.
     */
    pcie_cap_fill_link_ep_usp(pdev, s->link_width, s->link_speed);
    return pos;
}

/*
 * MSI for the driver's pci_enable_msi. It is part of configuration space
 * (migrated, reset by the PCI core); the block never signals it. With
 * msi=auto a machine without working MSI (msi_init's -ENOTSUP) gets a card
 * without the capability, as with msi=off; msi=on refuses such a machine.
 */
bool ndk_telemetry_init_msi(NdkPcieTelemetryState *s, Error **errp)
{
    Error *err = NULL;
    int ret;

    if (s->msi == ON_OFF_AUTO_OFF) {
        return true;
    }
    ret = msi_init(PCI_DEVICE(s), NDK_TELEMETRY_MSI_OFFSET, 1, true, false,
                   &err);
    if (ret == -ENOTSUP && s->msi == ON_OFF_AUTO_AUTO) {
        error_free(err);
        return true;
    }
    if (ret < 0) {
        error_setg(errp, "%s: property 'msi' is on, but %s; use msi=auto "
                   "or msi=off", TYPE_NDK_PCIE_TELEMETRY,
                   error_get_pretty(err));
        error_free(err);
        return false;
    }
    return true;
}

/*
 * The NDK device-tree VSEC, where the NDK driver looks for the firmware's
 * device tree: header, endpoint index, length, then the word index
 * (read/write) and the data word (see ndk_telemetry_config_read).
 */
bool ndk_telemetry_init_devtree(NdkPcieTelemetryState *s,
                                       Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    g_autofree char *err = NULL;
    uint8_t *cap;

    PtmFirmwareId id = {
        .card_name = s->card_name,
        .project_name = s->project_name,
        .project_variant = s->project_variant,
        .project_version = s->project_version,
        .build_time = s->build_time,
        .build_tool = s->build_tool,
        .build_author = s->build_author,
        .build_revision = s->build_revision,
    };
    PtmDevtreeDma dma = {
        .ports = s->cfg.dma_ports,
        .queues = s->dma_queues,
        .rx_base = NDP_BAR_RX_BASE,
        .tx_base = NDP_BAR_TX_BASE,
        .gls_base = NDP_BAR_GLS_BASE,
    };

    PtmDevtreePg381 pg381 = {
        .base = NDK_PG381_BASE,
        .size = PG381_WINDOW,
        .clock_hz = s->cfg.pcie_clk_hz,
    };

    s->devtree_xz = ptm_devtree_build_card(&id, &dma,
                                           s->pg381_present ? &pg381 : NULL,
                                           s->block_offset, PTM_VERSION,
                                           s->cfg.pcie_endpoints,
                                           &s->devtree_len, &err);
    if (!s->devtree_xz) {
        error_setg(errp, "%s: %s", TYPE_NDK_PCIE_TELEMETRY, err);
        return false;
    }
    s->vsec = PTM_VSEC_OFFSET;
    pcie_add_capability(pdev, PTM_VSEC_CAP_ID, PTM_VSEC_CAP_VER, s->vsec,
                        PTM_VSEC_SIZE);
    cap = pdev->config + s->vsec;
    pci_set_long(cap + PTM_VSEC_REG_HEADER, PTM_VSEC_HEADER);
    /* this function is PCIe endpoint 0 of the card */
    pci_set_long(cap + PTM_VSEC_REG_ENDPOINT, PTM_VSEC_ENDPOINT_VALID | 0);
    pci_set_long(cap + PTM_VSEC_REG_LENGTH, s->devtree_len);
    pci_set_long(pdev->wmask + s->vsec + PTM_VSEC_REG_INDEX, 0xFFFFFFFF);
    return true;
}

/* The flit model's totals: what the card sent and received, time in L0 */
static void ndk_telemetry_flit_totals(void *opaque, uint64_t now,
                                      FlitTotals *out)
{
    NdkPcieTelemetryState *s = opaque;
    PcieLinkTotals t;
    uint64_t up = now - MIN(now, s->flit_origin);

    pcie_link_traffic_totals(OBJECT(s), now, &t);
    out->tx_payload = t.payload_up;
    out->rx_payload = t.payload_down;
    out->l0_ns = up - MIN(up, t.link_down_ns);
}

/* The port above, if it is the other end of a flit-mode link */
FlitPci *ndk_telemetry_flit_port(NdkPcieTelemetryState *s)
{
    PCIBus *bus = pci_get_bus(PCI_DEVICE(s));
    PCIDevice *port = bus ? pci_bridge_get_device(bus) : NULL;

    if (PCI_DEVICE(s)->devfn != 0 || !port) {
        return NULL;
    }
    return pcie_flit_link_end(OBJECT(port));
}

/*
 * PCIe 6 flit mode: the three capabilities after the device-tree VSEC.
 * The port above trains the link (flit-pci.h).
 */
bool ndk_telemetry_init_flit(NdkPcieTelemetryState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    FlitEndConfig fc = {
        .width = s->link_width, .ltssm_regs = s->flit_ltssm_regs,
        .flight_ns = s->flit_flight_ns,
    };

    if (!s->flit_mode) {
        return true;
    }
    if (!pci_is_express(pdev)) {
        error_setg(errp, "%s: property 'flit-mode' needs a PCI Express bus",
                   TYPE_NDK_PCIE_TELEMETRY);
        return false;
    }
    if (s->link_speed != QEMU_PCI_EXP_LNK_64GT) {
        error_setg(errp, "%s: property 'flit-mode' needs 'link-speed=64' "
                   "(flit mode is PCIe 6.0's, at 64 GT/s)",
                   TYPE_NDK_PCIE_TELEMETRY);
        return false;
    }
    if (!flit_pci_check(&fc, TYPE_NDK_PCIE_TELEMETRY, "link-width", errp)) {
        return false;
    }
    s->flit_origin = now_ns();
    flit_pci_init(&s->flit, pdev,
                  s->vsec ? NDK_TELEMETRY_FLIT_OFFSET : PCI_CONFIG_SPACE_SIZE,
                  &fc, ndk_telemetry_flit_totals, s);
    return true;
}

/* Power-on values of the fields the host negotiates. */
void ndk_telemetry_reset_pcie(NdkPcieTelemetryState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *cap;

    if (s->vsec) {
        pci_set_long(pdev->config + s->vsec + PTM_VSEC_REG_INDEX, 0);
    }
    if (!pci_is_express(pdev) || !pdev->exp.exp_cap) {
        return;
    }
    cap = pdev->config + pdev->exp.exp_cap;
    pci_word_test_and_clear_mask(cap + PCI_EXP_DEVCTL,
                                 PCI_EXP_DEVCTL_PAYLOAD |
                                 PCI_EXP_DEVCTL_READRQ |
                                 PCI_EXP_DEVCTL_EXT_TAG);
    /*
     * 512-byte read requests; extended tags on where supported, as
     * PCIe 4.0 and later devices come up
     */
    pci_word_test_and_set_mask(cap + PCI_EXP_DEVCTL,
                               2 << 12 |
                               (s->ext_tag ? PCI_EXP_DEVCTL_EXT_TAG : 0));
    pci_word_test_and_clear_mask(cap + PCI_EXP_DEVCTL2,
                                 EXP_DEVCTL2_10BIT_TAG_REQ);
    pci_word_test_and_clear_mask(cap + PCI_EXP_LNKCTL, PCI_EXP_LNKCTL_RCB);
}
