// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0-only
// tracekit: copies the IPv4/IPv6 + transport header bytes of the packets seen by the
// net_dev_queue (TX) and netif_receive_skb (RX) tracepoints into a ring buffer. The recorder
// merges them into the ftrace events of the same skb (same CLOCK_MONOTONIC clock).
//
// Only the few sk_buff fields needed are declared, with preserve_access_index: their offsets
// are relocated against the running kernel's BTF at load time (CO-RE), so no vmlinux.h.

#include "common.h"

struct sk_buff {
	unsigned int len;
	__u16 protocol;
	__u16 network_header;
	unsigned char *head;
	unsigned char *data;
} __attribute__((preserve_access_index));

#define HDR_BYTES 96

// Must match `BpfRecord` in src/netheader.rs.
struct record {
	__u64 ts;
	__u64 skbaddr;
	__u32 len;
	__u16 protocol; // network byte order, as skb->protocol
	__u8 dir;       // 0 = TX (net_dev_queue), 1 = RX (netif_receive_skb)
	__u8 ncopied;   // bytes of hdr that are valid
	__u8 hdr[HDR_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

static __always_inline int emit(struct sk_buff *skb, __u8 dir)
{
	__u16 proto = 0;
	bpf_probe_read_kernel(&proto, sizeof(proto), &skb->protocol);
	// ETH_P_IP (0x0800) and ETH_P_IPV6 (0x86DD), in network byte order.
	if (proto != __builtin_bswap16(0x0800) && proto != __builtin_bswap16(0x86DD))
		return 0;
	struct record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = bpf_ktime_get_ns();
	r->skbaddr = (__u64)skb;
	r->dir = dir;
	r->protocol = proto;
	r->len = 0;
	bpf_probe_read_kernel(&r->len, sizeof(r->len), &skb->len);
	unsigned char *p = 0;
	if (dir == 0) {
		// TX: data is at the link-layer header; the network header offset is set.
		unsigned char *head = 0;
		__u16 nh = 0;
		bpf_probe_read_kernel(&head, sizeof(head), &skb->head);
		bpf_probe_read_kernel(&nh, sizeof(nh), &skb->network_header);
		p = head + nh;
	} else {
		// RX after eth_type_trans: data is at the network header.
		bpf_probe_read_kernel(&p, sizeof(p), &skb->data);
	}
	r->ncopied = HDR_BYTES;
	if (bpf_probe_read_kernel(r->hdr, HDR_BYTES, p) < 0) {
		r->ncopied = 0;
		if (bpf_probe_read_kernel(r->hdr, 40, p) == 0)
			r->ncopied = 40;
	}
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("raw_tp/net_dev_queue")
int tk_net_dev_queue(__u64 *ctx)
{
	return emit((struct sk_buff *)ctx[0], 0);
}

SEC("raw_tp/netif_receive_skb")
int tk_netif_receive_skb(__u64 *ctx)
{
	return emit((struct sk_buff *)ctx[0], 1);
}

char LICENSE[] SEC("license") = "GPL";
