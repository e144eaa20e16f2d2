// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfb_standin: a stand-in for CESNET's nfb driver (ndk-sw,
 * drivers/kernel/drivers/nfb) in the project's guest tests, where the real
 * driver cannot be built. It does to a card what matters to pcie-telemetry
 * and nothing more:
 *  - binds the virtual card's ID 1234:0d7b and CESNET's COMBO-GENERIC
 *    18ec:c000, and like nfb refuses a card on the root PCI bus;
 *  - enables the function and claims its BARs with pci_request_regions(),
 *    as nfb does, so that under CONFIG_IO_STRICT_DEVMEM a mapping of the
 *    BAR through sysfs is refused unless the kernel runs with iomem=relaxed;
 *  - enables MSI (one vector) and carries on without it, as nfb does;
 *  - creates a character device nfbN in a class "nfb" with the PCI function
 *    as its parent: /dev/nfbN (devtmpfs), /sys/class/nfb/nfbN/device and
 *    /sys/dev/char/MAJOR:MINOR/device lead to the card, which is how
 *    pcie-telemetry -d /dev/nfbN finds it.
 * The character device does nothing but open and close: it has none of
 * nfb's interface (no device tree, MI buses, DMA or locks).
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/version.h>

#define NFB_STANDIN_MINORS 32

struct nfb_standin {
	struct pci_dev *pdev;
	struct cdev cdev;
	struct device *dev;
	int minor;
	int irq;		/* -1: no MSI */
	unsigned long irqs;
};

static struct class *nfb_class;
static dev_t nfb_devt;
static DEFINE_IDA(nfb_minors);

static int nfb_standin_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static const struct file_operations nfb_standin_fops = {
	.owner = THIS_MODULE,
	.open = nfb_standin_open,
};

static irqreturn_t nfb_standin_irq(int irq, void *data)
{
	struct nfb_standin *nfb = data;

	nfb->irqs++;
	return IRQ_HANDLED;
}

static void nfb_standin_msi(struct nfb_standin *nfb)
{
	struct pci_dev *pdev = nfb->pdev;
	int ret;

	nfb->irq = -1;
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (ret < 0) {
		dev_warn(&pdev->dev, "unable to enable MSI (%d)\n", ret);
		return;
	}
	ret = request_irq(pci_irq_vector(pdev, 0), nfb_standin_irq, 0,
			  KBUILD_MODNAME, nfb);
	if (ret) {
		dev_warn(&pdev->dev, "unable to request the MSI vector (%d)\n",
			 ret);
		pci_free_irq_vectors(pdev);
		return;
	}
	nfb->irq = pci_irq_vector(pdev, 0);
}

static int nfb_standin_probe(struct pci_dev *pdev,
			     const struct pci_device_id *id)
{
	struct nfb_standin *nfb;
	int ret;

	/* nfb's own check and words (pci.c) */
	if (pci_is_root_bus(pdev->bus)) {
		dev_err(&pdev->dev, "attaching an nfb card to the root PCI bus "
			"is not supported\n");
		return -EOPNOTSUPP;
	}
	nfb = kzalloc(sizeof(*nfb), GFP_KERNEL);
	if (!nfb)
		return -ENOMEM;
	nfb->pdev = pdev;
	ret = pci_enable_device(pdev);
	if (ret) {
		dev_err(&pdev->dev, "unable to enable the device (%d)\n", ret);
		goto err_free;
	}
	ret = pci_request_regions(pdev, KBUILD_MODNAME);
	if (ret) {
		dev_err(&pdev->dev, "unable to claim the BARs (%d)\n", ret);
		goto err_disable;
	}
	pci_set_master(pdev);
	nfb_standin_msi(nfb);

	ret = ida_alloc_max(&nfb_minors, NFB_STANDIN_MINORS - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_irq;
	nfb->minor = ret;
	cdev_init(&nfb->cdev, &nfb_standin_fops);
	nfb->cdev.owner = THIS_MODULE;
	ret = cdev_add(&nfb->cdev, MKDEV(MAJOR(nfb_devt), nfb->minor), 1);
	if (ret)
		goto err_minor;
	nfb->dev = device_create(nfb_class, &pdev->dev,
				 MKDEV(MAJOR(nfb_devt), nfb->minor), nfb,
				 "nfb%d", nfb->minor);
	if (IS_ERR(nfb->dev)) {
		ret = PTR_ERR(nfb->dev);
		goto err_cdev;
	}
	pci_set_drvdata(pdev, nfb);
	dev_info(&pdev->dev, "stand-in for nfb: /dev/nfb%d, BARs claimed, "
		 "MSI %s\n", nfb->minor, nfb->irq >= 0 ? "on" : "off");
	return 0;

err_cdev:
	cdev_del(&nfb->cdev);
err_minor:
	ida_free(&nfb_minors, nfb->minor);
err_irq:
	if (nfb->irq >= 0) {
		free_irq(nfb->irq, nfb);
		pci_free_irq_vectors(pdev);
	}
	pci_clear_master(pdev);
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	kfree(nfb);
	return ret;
}

static void nfb_standin_remove(struct pci_dev *pdev)
{
	struct nfb_standin *nfb = pci_get_drvdata(pdev);

	device_destroy(nfb_class, MKDEV(MAJOR(nfb_devt), nfb->minor));
	cdev_del(&nfb->cdev);
	ida_free(&nfb_minors, nfb->minor);
	if (nfb->irq >= 0) {
		free_irq(nfb->irq, nfb);
		pci_free_irq_vectors(pdev);
	}
	pci_clear_master(pdev);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	dev_info(&pdev->dev, "stand-in for nfb: detached\n");
	kfree(nfb);
}

static const struct pci_device_id nfb_standin_ids[] = {
	{ PCI_DEVICE(0x1234, 0x0d7b) },	/* the virtual ndk-pcie-telemetry card */
	{ PCI_DEVICE(0x18ec, 0xc000) },	/* CESNET COMBO-GENERIC */
	{ }
};
MODULE_DEVICE_TABLE(pci, nfb_standin_ids);

static struct pci_driver nfb_standin_driver = {
	.name = KBUILD_MODNAME,
	.id_table = nfb_standin_ids,
	.probe = nfb_standin_probe,
	.remove = nfb_standin_remove,
};

static int __init nfb_standin_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&nfb_devt, 0, NFB_STANDIN_MINORS, "nfb");
	if (ret)
		return ret;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	nfb_class = class_create("nfb");
#else
	nfb_class = class_create(THIS_MODULE, "nfb");
#endif
	if (IS_ERR(nfb_class)) {
		ret = PTR_ERR(nfb_class);
		goto err_region;
	}
	ret = pci_register_driver(&nfb_standin_driver);
	if (ret)
		goto err_class;
	return 0;

err_class:
	class_destroy(nfb_class);
err_region:
	unregister_chrdev_region(nfb_devt, NFB_STANDIN_MINORS);
	return ret;
}

static void __exit nfb_standin_exit(void)
{
	pci_unregister_driver(&nfb_standin_driver);
	class_destroy(nfb_class);
	unregister_chrdev_region(nfb_devt, NFB_STANDIN_MINORS);
	ida_destroy(&nfb_minors);
}

module_init(nfb_standin_init);
module_exit(nfb_standin_exit);

MODULE_DESCRIPTION("Stand-in for CESNET's nfb driver in the tests of "
		   "ndk-pcie-telemetry: binds the card, claims its BARs, "
		   "/dev/nfbN");
MODULE_LICENSE("GPL");
