// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0-only
// tracekit: what every eBPF helper of the recorder declares itself rather than take from
// vmlinux.h or the kernel's headers: the fixed-size types and the UAPI numbers it uses, then
// libbpf's helper declarations.
#ifndef TRACEKIT_BPF_COMMON_H
#define TRACEKIT_BPF_COMMON_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
typedef signed long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

// From linux/bpf.h (UAPI, stable numbers).
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_MAP_TYPE_TASK_STORAGE 29
#define BPF_F_NO_PREALLOC 1
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1
#define BPF_ANY 0
#define BPF_F_USER_STACK (1ULL << 8)

#include <bpf/bpf_helpers.h>

#endif
