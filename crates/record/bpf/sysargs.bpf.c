// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0-only
// tracekit: copies the user-space string arguments of system calls (openat's filename,
// execve's filename…) at their entry, which tracefs' raw syscall events only give as
// pointers. The recorder puts them in the syscall_entry_* events, where LTTng has them.
//
// Which arguments of which system call are strings comes from the recorder (the `strings`
// map: per system call number, a bit per argument), so a call without string arguments costs
// one array lookup. Strings go out with their own length (bpf_ringbuf_output from a per-CPU
// scratch record), not in fixed-size records.

#include "common.h"

// The x86-64 system call argument registers, in order.
struct pt_regs {
	unsigned long di;
	unsigned long si;
	unsigned long dx;
	unsigned long r10;
	unsigned long r8;
	unsigned long r9;
} __attribute__((preserve_access_index));

#define NR_MAX 512
#define STR_MAX 4096

// Must match `ArgRecord` in src/sysargs.rs.
struct record {
	__u64 ts;
	__s32 tid;
	__s32 nr;
	__u32 arg;
	__u32 len; // bytes of s, its NUL included
	char s[STR_MAX];
};

#define HDR_SIZE (sizeof(struct record) - STR_MAX)

// The recorder's process, left out.
volatile const __s32 cfg_self_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_MAX);
	__type(key, __u32);
	__type(value, __u8);
} strings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} sysargs SEC(".maps");

static __always_inline void copy(struct record *r, __u32 arg, unsigned long ptr)
{
	r->arg = arg;
	long n = bpf_probe_read_user_str(r->s, STR_MAX, (const void *)ptr);
	if (n <= 0) {
		r->s[0] = 0;
		n = 1;
	}
	if (n > STR_MAX)
		n = STR_MAX;
	r->len = n;
	bpf_ringbuf_output(&sysargs, r, HDR_SIZE + n, 0);
}

// Bit 7 of a mask: argument 1 is a `struct sockaddr *` whose length is argument 2
// (connect): its bytes (at most a sockaddr_in6) go out as argument 0x81.
#define SOCKADDR_BIT 0x80
#define SOCKADDR_MAX 28

static __always_inline void copy_sockaddr(struct record *r, unsigned long ptr, long len)
{
	if (len <= 0)
		return;
	if (len > SOCKADDR_MAX)
		len = SOCKADDR_MAX;
	r->arg = SOCKADDR_BIT | 1;
	if (bpf_probe_read_user(r->s, len & 31, (const void *)ptr) != 0)
		return;
	r->len = len & 31;
	bpf_ringbuf_output(&sysargs, r, HDR_SIZE + (len & 31), 0);
}

SEC("tp_btf/sys_enter")
int tk_sysargs_enter(unsigned long long *ctx)
{
	__u32 nr = (__u32)ctx[1];
	if (nr >= NR_MAX)
		return 0;
	__u8 *mask = bpf_map_lookup_elem(&strings, &nr);
	if (!mask || !*mask)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if ((__s32)(pt >> 32) == cfg_self_tgid)
		return 0;
	__u32 zero = 0;
	struct record *r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	__u8 m = *mask;
	r->ts = bpf_ktime_get_ns();
	r->tid = (__s32)pt;
	r->nr = nr;
	if (m & 1)
		copy(r, 0, regs->di);
	if (m & 2)
		copy(r, 1, regs->si);
	if (m & 4)
		copy(r, 2, regs->dx);
	if (m & 8)
		copy(r, 3, regs->r10);
	if (m & 16)
		copy(r, 4, regs->r8);
	if (m & 32)
		copy(r, 5, regs->r9);
	if (m & SOCKADDR_BIT)
		copy_sockaddr(r, regs->si, (long)(int)regs->dx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
