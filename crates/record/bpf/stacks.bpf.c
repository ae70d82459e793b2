// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0-only
// tracekit: kernel (and user) stacks captured where latency happens, with the threshold of
// each `--stacks` rule checked here, in the kernel, so that quiet periods cost a timestamp.
//
// - offcpu>T: a task switched back in after more than T off the CPU gets its stack as it was
//   when it stopped (its saved kernel stack: it has not run since), and a task woken after
//   more than T asleep gets its waker's stack.
// - syscall>T: a task switched back in while a system call it began more than T ago is still
//   running gets its stack (where the call blocked), once per call.
// - wakeup>T: a task switched in more than T after it was woken gets its stack.
// - block>T: a block request that took more than T: its issuer's stack the next time the
//   issuer is switched back in (where it waited for the I/O, if it did).
//
// Stacks are copied whole (bpf_get_stack / bpf_get_task_stack into the record), never through
// a stack-id hash map, so no stack is lost to a hash collision. Only the task_struct and
// request fields needed are declared, with preserve_access_index (CO-RE), so no vmlinux.h.

#include "common.h"

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
} __attribute__((preserve_access_index));

struct request {
	__u64 __sector;
} __attribute__((preserve_access_index));

#define MAX_FRAMES 127
#define COMM_LEN 16

// Must match `StackRecord` in src/stacks.rs.
struct record {
	__u64 ts;         // CLOCK_MONOTONIC, as the tracefs instance's `mono` clock
	__u64 delay;      // ns over which the rule fired
	__u64 start_ts;   // when the measured interval began
	__u64 extra;      // syscall number (syscall), sector (block)
	__u32 kind;       // 1 syscall, 2 offcpu switch-in, 3 offcpu waker, 4 wakeup, 5 block
	__u32 cpu;
	__s32 tid;        // the task whose stack this is
	__s32 pid;
	__s32 other_tid;  // offcpu waker: the wakee
	__s32 other_pid;
	char comm[COMM_LEN];
	char other_comm[COMM_LEN];
	__s32 kbytes;     // bytes of kstack filled (<= 0: none)
	__s32 ubytes;     // bytes of ustack filled (<= 0: none)
	__u64 kstack[MAX_FRAMES];
	__u64 ustack[MAX_FRAMES];
};

enum kind { K_SYSCALL = 1, K_OFFCPU = 2, K_WAKER = 3, K_WAKEUP = 4, K_BLOCK = 5 };

// Thresholds in ns (0: rule off), set at load time.
volatile const __u64 cfg_syscall_ns = 0;
volatile const __u64 cfg_offcpu_ns = 0;
volatile const __u64 cfg_wakeup_ns = 0;
volatile const __u64 cfg_block_ns = 0;
// The recorder's process, left out.
volatile const __s32 cfg_self_tgid = 0;
// Also copy user stacks (frame-pointer walks: only where the binaries keep frame pointers).
volatile const __u32 cfg_user = 1;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 23);
} stacks SEC(".maps");

// Per task, in the task itself (task storage: no hashing, no locking, freed with the task):
// when it last went off the CPU (offcpu), when it was last woken (wakeup), the system call in
// progress (syscall).
struct task_state {
	__u64 off_since;
	__u64 woken_at;
	__u64 sys_ts;
	__s64 sys_id;
	__u32 in_sys;
	__u32 sys_done;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} tstate SEC(".maps");

struct rq_state {
	__u64 ts;
	__s32 tid;
	__s32 pid;
};

// Per block request in flight (block).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rq_state);
} rq_issued SEC(".maps");

struct slow_io {
	__u64 issue_ts;
	__u64 delay;
	__u64 sector;
};

// Per task: a slow request of its whose stack is still to be taken.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __s32);
	__type(value, struct slow_io);
} slow_io SEC(".maps");

// Stacks lost because the ring buffer was full (the recorder reads it as it reads pages).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline struct record *reserve(__u32 kind, __u64 now, __u64 delay)
{
	struct record *r = bpf_ringbuf_reserve(&stacks, sizeof(*r), 0);
	if (!r) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			*n += 1;
		return 0;
	}
	r->ts = now;
	r->delay = delay;
	r->start_ts = now - delay;
	r->extra = 0;
	r->kind = kind;
	r->cpu = bpf_get_smp_processor_id();
	r->other_tid = 0;
	r->other_pid = 0;
	r->other_comm[0] = 0;
	r->kbytes = 0;
	r->ubytes = 0;
	return r;
}

// The stack of `t`, which is not running (it is being switched in): its saved kernel stack.
static __always_inline void task_stacks(struct record *r, struct task_struct *t)
{
	r->tid = t->pid;
	r->pid = t->tgid;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
	r->kbytes = bpf_get_task_stack(t, r->kstack, sizeof(r->kstack), 0);
	if (cfg_user)
		r->ubytes = bpf_get_task_stack(t, r->ustack, sizeof(r->ustack), BPF_F_USER_STACK);
}

// The stack of the running task.
static __always_inline void current_stacks(struct record *r, void *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	r->tid = (__s32)pt;
	r->pid = pt >> 32;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->kbytes = bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
	if (cfg_user)
		r->ubytes = bpf_get_stack(ctx, r->ustack, sizeof(r->ustack), BPF_F_USER_STACK);
}

SEC("tp_btf/sched_switch")
int tk_stacks_switch(unsigned long long *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	__u64 now = bpf_ktime_get_ns();
	__s32 prev_tid = prev->pid, next_tid = next->pid;
	// The idle tasks (pid 0, one per CPU) are not threads that wait.
	if (cfg_offcpu_ns && prev_tid != 0 && prev->tgid != cfg_self_tgid) {
		struct task_state *p =
			bpf_task_storage_get(&tstate, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (p)
			p->off_since = now;
	}
	if (next_tid == 0 || next->tgid == cfg_self_tgid)
		return 0;
	struct task_state *n = bpf_task_storage_get(&tstate, next, 0, 0);
	// Times stored by other CPUs may be later than `now`, taken before they were read (a
	// thread woken while still switching out): no wait then, not a 2^64 ns one.
	if (n && cfg_offcpu_ns && n->off_since) {
		__u64 d = now > n->off_since ? now - n->off_since : 0;
		n->off_since = 0;
		if (d > cfg_offcpu_ns) {
			struct record *r = reserve(K_OFFCPU, now, d);
			if (r) {
				task_stacks(r, next);
				bpf_ringbuf_submit(r, 0);
			}
		}
	}
	if (n && cfg_wakeup_ns && n->woken_at) {
		__u64 d = now > n->woken_at ? now - n->woken_at : 0;
		n->woken_at = 0;
		if (d > cfg_wakeup_ns) {
			struct record *r = reserve(K_WAKEUP, now, d);
			if (r) {
				task_stacks(r, next);
				bpf_ringbuf_submit(r, 0);
			}
		}
	}
	if (n && cfg_syscall_ns && n->in_sys && !n->sys_done && now - n->sys_ts > cfg_syscall_ns) {
		n->sys_done = 1;
		struct record *r = reserve(K_SYSCALL, now, now - n->sys_ts);
		if (r) {
			r->extra = n->sys_id;
			task_stacks(r, next);
			bpf_ringbuf_submit(r, 0);
		}
	}
	if (cfg_block_ns) {
		struct slow_io *io = bpf_map_lookup_elem(&slow_io, &next_tid);
		if (io) {
			struct record *r = reserve(K_BLOCK, now, io->delay);
			if (r) {
				r->start_ts = io->issue_ts;
				r->extra = io->sector;
				task_stacks(r, next);
				bpf_ringbuf_submit(r, 0);
			}
			bpf_map_delete_elem(&slow_io, &next_tid);
		}
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int tk_stacks_waking(unsigned long long *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx[0];
	__s32 tid = p->pid;
	if (tid == 0 || p->tgid == cfg_self_tgid)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct task_state *s = bpf_task_storage_get(
		&tstate, p, 0, cfg_wakeup_ns ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!s)
		return 0;
	if (cfg_wakeup_ns)
		s->woken_at = now;
	if (cfg_offcpu_ns && s->off_since && now > s->off_since &&
	    now - s->off_since > cfg_offcpu_ns) {
		struct record *r = reserve(K_WAKER, now, now - s->off_since);
		if (r) {
			current_stacks(r, ctx);
			r->other_tid = tid;
			r->other_pid = p->tgid;
			bpf_probe_read_kernel_str(r->other_comm, sizeof(r->other_comm), p->comm);
			bpf_ringbuf_submit(r, 0);
		}
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int tk_stacks_sys_enter(unsigned long long *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	if (t->tgid == cfg_self_tgid)
		return 0;
	struct task_state *s = bpf_task_storage_get(&tstate, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0;
	s->sys_ts = bpf_ktime_get_ns();
	s->sys_id = (__s64)ctx[1];
	s->in_sys = 1;
	s->sys_done = 0;
	return 0;
}

SEC("tp_btf/sys_exit")
int tk_stacks_sys_exit(unsigned long long *ctx)
{
	struct task_state *s = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
	if (s)
		s->in_sys = 0;
	return 0;
}

SEC("tp_btf/block_rq_issue")
int tk_stacks_rq_issue(unsigned long long *ctx)
{
	__u64 rq = ctx[0];
	__u64 pt = bpf_get_current_pid_tgid();
	struct rq_state s = {
		.ts = bpf_ktime_get_ns(),
		.tid = (__s32)pt,
		.pid = pt >> 32,
	};
	bpf_map_update_elem(&rq_issued, &rq, &s, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int tk_stacks_rq_complete(unsigned long long *ctx)
{
	__u64 rq = ctx[0];
	struct rq_state *s = bpf_map_lookup_elem(&rq_issued, &rq);
	if (!s)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (now - s->ts > cfg_block_ns && s->tid != 0 && s->pid != cfg_self_tgid) {
		struct request *req = (struct request *)ctx[0];
		struct slow_io io = {
			.issue_ts = s->ts,
			.delay = now - s->ts,
			.sector = req->__sector,
		};
		__s32 tid = s->tid;
		bpf_map_update_elem(&slow_io, &tid, &io, BPF_ANY);
	}
	bpf_map_delete_elem(&rq_issued, &rq);
	return 0;
}

// A task that exits leaves its slow request, if any (its task storage goes with it).
SEC("tp_btf/sched_process_exit")
int tk_stacks_exit(unsigned long long *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx[0];
	__s32 tid = p->pid;
	bpf_map_delete_elem(&slow_io, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
