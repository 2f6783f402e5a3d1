// kvm-smoke: the first test of the emulated ARM64 KVM host, needing nothing
// of trapline. It checks that /dev/kvm there is KVM/ARM as trapline needs it:
// the API version, the capabilities trapline relies on (printed, so a run
// records what the host offers), a vGICv3 and an ITS that can be created,
// and one tiny guest run end to end: MMIO exits with the right address, size
// and data both ways, an ioeventfd write that never exits, and PSCI
// SYSTEM_OFF ending the guest with KVM_EXIT_SYSTEM_EVENT.
//
// Built static by scripts/arm64/test.sh: aarch64-linux-gnu-gcc -static.
// Exit status: 0 every check passed, 1 a check failed (the line says which).
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__aarch64__)
#error "kvm-smoke is a test of KVM/ARM: build it with an aarch64 compiler"
#endif

// QEMU virt's layout, which trapline's arm64 machine follows: RAM from
// 0x4000_0000; 0x0a00_0000 is virtio-mmio transport 0, unmapped here, so
// every access to it exits to user space. No integer suffixes: the guest's
// assembly below uses these too.
#define RAM_GPA 0x40000000
#define RAM_SIZE 0x10000
#define MMIO_BASE 0x0a000000
#define MMIO_DATA_OFF 0x8 // the guest writes WRITE_VALUE, then reads, here
#define MMIO_ECHO_OFF 0x10 // the guest writes back what it read
#define MMIO_EVENT_OFF 0x100 // an ioeventfd: the write does not exit
#define WRITE_VALUE 0xdeadbeef
#define READ_VALUE 0x12345678 // what this VMM answers to the read

#define STR_(x) #x
#define STR(x) STR_(x)

// The guest, entered at RAM_GPA in EL1 with the MMU off. Plain 32-bit
// ldr/str with an immediate offset: the syndrome is valid, so KVM can hand
// them to user space (a pair or a writeback form could not be decoded).
// `ldr =` takes its constants from the literal pool that .ltorg places
// inside the copied range.
__asm__(".pushsection .rodata\n"
        ".balign 8\n"
        ".global smoke_guest_start, smoke_guest_end\n"
        "smoke_guest_start:\n"
        "  ldr  x1, =" STR(MMIO_BASE) "\n"
        "  ldr  w2, =" STR(WRITE_VALUE) "\n"
        "  str  w2, [x1, #" STR(MMIO_DATA_OFF) "]\n" // exit 1: MMIO write
        "  ldr  w3, [x1, #" STR(MMIO_DATA_OFF) "]\n" // exit 2: MMIO read
        "  str  w3, [x1, #" STR(MMIO_ECHO_OFF) "]\n" // exit 3: MMIO write of what was read
        "  str  w2, [x1, #" STR(MMIO_EVENT_OFF) "]\n" // the ioeventfd: no exit
        "  ldr  w0, =" STR(PSCI_0_2_FN_SYSTEM_OFF) "\n"
        "  hvc  #0\n" // exit 4: KVM_EXIT_SYSTEM_EVENT
        "1: b 1b\n"
        ".ltorg\n"
        "smoke_guest_end:\n"
        ".popsection\n");
extern const unsigned char smoke_guest_start[], smoke_guest_end[];

static int failures;

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("kvm-smoke: FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

// Ends the run at once: what follows cannot go on without this step.
static void die(const char *what)
{
	printf("kvm-smoke: FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct cap {
	const char *name;
	int id;
	int needed; // trapline's arm64 machine relies on it
};

// Asked on the VM's fd (KVM_CAP_CHECK_EXTENSION_VM): on arm64 some answers
// depend on the VM (e.g. the IPA size).
static const struct cap caps[] = {
	{ "KVM_CAP_IRQFD", KVM_CAP_IRQFD, 1 },
	{ "KVM_CAP_IOEVENTFD", KVM_CAP_IOEVENTFD, 1 },
	{ "KVM_CAP_ARM_PSCI_0_2", KVM_CAP_ARM_PSCI_0_2, 1 },
	{ "KVM_CAP_ONE_REG", KVM_CAP_ONE_REG, 1 },
	{ "KVM_CAP_DEVICE_CTRL", KVM_CAP_DEVICE_CTRL, 1 },
	{ "KVM_CAP_USER_MEMORY", KVM_CAP_USER_MEMORY, 1 },
	{ "KVM_CAP_IRQ_ROUTING", KVM_CAP_IRQ_ROUTING, 0 },
	{ "KVM_CAP_ARM_PMU_V3", KVM_CAP_ARM_PMU_V3, 0 },
	{ "KVM_CAP_ARM_NISV_TO_USER", KVM_CAP_ARM_NISV_TO_USER, 0 },
	{ "KVM_CAP_COALESCED_MMIO", KVM_CAP_COALESCED_MMIO, 0 },
	{ "KVM_CAP_READONLY_MEM", KVM_CAP_READONLY_MEM, 0 },
	{ "KVM_CAP_ARM_VM_IPA_SIZE", KVM_CAP_ARM_VM_IPA_SIZE, 0 },
	{ "KVM_CAP_ARM_SVE", KVM_CAP_ARM_SVE, 0 },
	{ "KVM_CAP_ARM_PTRAUTH_ADDRESS", KVM_CAP_ARM_PTRAUTH_ADDRESS, 0 },
	{ "KVM_CAP_ARM_EL1_32BIT", KVM_CAP_ARM_EL1_32BIT, 0 },
	{ "KVM_CAP_NR_VCPUS", KVM_CAP_NR_VCPUS, 0 },
	{ "KVM_CAP_MAX_VCPUS", KVM_CAP_MAX_VCPUS, 0 },
	{ "KVM_CAP_BINARY_STATS_FD", KVM_CAP_BINARY_STATS_FD, 0 },
#ifdef KVM_CAP_COUNTER_OFFSET
	{ "KVM_CAP_COUNTER_OFFSET", KVM_CAP_COUNTER_OFFSET, 0 },
#endif
};

static void check_caps(int vm)
{
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int v = ioctl(vm, KVM_CHECK_EXTENSION, caps[i].id);
		printf("kvm-smoke: cap %-28s = %d%s\n", caps[i].name, v,
		       caps[i].needed ? " (needed)" : "");
		if (caps[i].needed && v <= 0)
			fail("%s is missing: trapline needs it", caps[i].name);
	}
}

// KVM_CREATE_DEVICE_TEST: asks whether the device could be created,
// without creating it.
static void check_device(int vm, const char *name, uint32_t type)
{
	struct kvm_create_device d = { .type = type, .flags = KVM_CREATE_DEVICE_TEST };
	int ok = ioctl(vm, KVM_CREATE_DEVICE, &d) == 0;
	printf("kvm-smoke: device %-25s = %s\n", name, ok ? "yes" : strerror(errno));
	if (!ok)
		fail("cannot create a %s", name);
}

static void set_reg(int vcpu, uint64_t id, uint64_t value)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uint64_t)(uintptr_t)&value };
	if (ioctl(vcpu, KVM_SET_ONE_REG, &reg) < 0)
		die("KVM_SET_ONE_REG");
}

#define CORE_REG(field) \
	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(field))

static const char *exit_name(uint32_t reason)
{
	switch (reason) {
	case KVM_EXIT_MMIO: return "KVM_EXIT_MMIO";
	case KVM_EXIT_SYSTEM_EVENT: return "KVM_EXIT_SYSTEM_EVENT";
	case KVM_EXIT_INTERNAL_ERROR: return "KVM_EXIT_INTERNAL_ERROR";
	case KVM_EXIT_FAIL_ENTRY: return "KVM_EXIT_FAIL_ENTRY";
	case KVM_EXIT_ARM_NISV: return "KVM_EXIT_ARM_NISV";
	default: return "another exit";
	}
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

// Runs the vCPU once and checks it stopped for an MMIO access as expected.
// On a read, answers READ_VALUE.
static void expect_mmio(int vcpu, struct kvm_run *run, int step, int is_write, uint64_t addr,
			uint32_t value)
{
	if (ioctl(vcpu, KVM_RUN, 0) < 0)
		die("KVM_RUN");
	if (run->exit_reason != KVM_EXIT_MMIO) {
		fail("exit %d: %s (%u), expected KVM_EXIT_MMIO", step, exit_name(run->exit_reason),
		     run->exit_reason);
		exit(1);
	}
	printf("kvm-smoke: exit %d: KVM_EXIT_MMIO %s addr %#llx len %u", step,
	       run->mmio.is_write ? "write" : "read", (unsigned long long)run->mmio.phys_addr,
	       run->mmio.len);
	if (run->mmio.is_write)
		printf(" data %#x", le32(run->mmio.data));
	printf("\n");
	if (run->mmio.is_write != is_write || run->mmio.phys_addr != addr || run->mmio.len != 4)
		fail("exit %d: expected a 4-byte %s at %#llx", step, is_write ? "write" : "read",
		     (unsigned long long)addr);
	else if (is_write && le32(run->mmio.data) != value)
		fail("exit %d: wrote %#x, expected %#x", step, le32(run->mmio.data), value);
	if (!run->mmio.is_write) {
		uint32_t v = READ_VALUE;
		memcpy(run->mmio.data, &v, sizeof(v)); // arm64 is little-endian
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("open /dev/kvm");
	int api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	printf("kvm-smoke: KVM_GET_API_VERSION = %d\n", api);
	if (api != KVM_API_VERSION) {
		fail("API version %d, expected %d", api, KVM_API_VERSION);
		return 1;
	}

	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	check_caps(vm);
	check_device(vm, "KVM_DEV_TYPE_ARM_VGIC_V3", KVM_DEV_TYPE_ARM_VGIC_V3);
	check_device(vm, "KVM_DEV_TYPE_ARM_VGIC_ITS", KVM_DEV_TYPE_ARM_VGIC_ITS);

	void *ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		die("mmap the guest's RAM");
	memcpy(ram, smoke_guest_start, (size_t)(smoke_guest_end - smoke_guest_start));
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = RAM_GPA,
		.memory_size = RAM_SIZE,
		.userspace_addr = (uint64_t)(uintptr_t)ram,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");

	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		die("eventfd");
	struct kvm_ioeventfd ioev = { .addr = MMIO_BASE + MMIO_EVENT_OFF, .len = 4, .fd = efd };
	if (ioctl(vm, KVM_IOEVENTFD, &ioev) < 0)
		die("KVM_IOEVENTFD");

	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	struct kvm_vcpu_init init;
	memset(&init, 0, sizeof(init));
	if (ioctl(vm, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		die("KVM_ARM_PREFERRED_TARGET");
	printf("kvm-smoke: KVM_ARM_PREFERRED_TARGET = %u\n", init.target);
	init.features[0] |= 1U << KVM_ARM_VCPU_PSCI_0_2;
	if (ioctl(vcpu, KVM_ARM_VCPU_INIT, &init) < 0)
		die("KVM_ARM_VCPU_INIT");
	// VCPU_INIT's reset state is EL1h with DAIF masked: only the PC is ours.
	set_reg(vcpu, CORE_REG(regs.pc), RAM_GPA);

	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		die("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap the vCPU's kvm_run");

	expect_mmio(vcpu, run, 1, 1, MMIO_BASE + MMIO_DATA_OFF, WRITE_VALUE);
	expect_mmio(vcpu, run, 2, 0, MMIO_BASE + MMIO_DATA_OFF, 0);
	expect_mmio(vcpu, run, 3, 1, MMIO_BASE + MMIO_ECHO_OFF, READ_VALUE);

	if (ioctl(vcpu, KVM_RUN, 0) < 0)
		die("KVM_RUN");
	if (run->exit_reason != KVM_EXIT_SYSTEM_EVENT) {
		fail("exit 4: %s (%u), expected KVM_EXIT_SYSTEM_EVENT for PSCI SYSTEM_OFF",
		     exit_name(run->exit_reason), run->exit_reason);
		if (run->exit_reason == KVM_EXIT_MMIO)
			printf("kvm-smoke: an MMIO exit at %#llx: the ioeventfd did not take the write\n",
			       (unsigned long long)run->mmio.phys_addr);
		return 1;
	}
	printf("kvm-smoke: exit 4: KVM_EXIT_SYSTEM_EVENT type %u\n", run->system_event.type);
	if (run->system_event.type != KVM_SYSTEM_EVENT_SHUTDOWN)
		fail("exit 4: system event type %u, expected KVM_SYSTEM_EVENT_SHUTDOWN (%u)",
		     run->system_event.type, KVM_SYSTEM_EVENT_SHUTDOWN);

	uint64_t events = 0;
	if (read(efd, &events, sizeof(events)) != sizeof(events))
		events = 0; // EAGAIN: it never fired
	printf("kvm-smoke: ioeventfd count = %llu\n", (unsigned long long)events);
	if (events != 1)
		fail("the guest's write to the ioeventfd at %#llx counted %llu times, expected once",
		     (unsigned long long)(MMIO_BASE + MMIO_EVENT_OFF), (unsigned long long)events);

	printf("kvm-smoke: %s\n", failures ? "FAILED" : "every check passed");
	return failures ? 1 : 0;
}
