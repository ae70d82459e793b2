//! Payloads of the network events ([`super::ev::NET_OUT`], [`super::ev::NET_IN`]) in either
//! [`NetLayout`].

use super::NetLayout;
use ctf::value::Value;

/// A TCP segment as the network events describe it.
#[derive(Debug, Clone, Copy)]
pub struct TcpSeg {
    /// IPv4 source address.
    pub saddr: [u8; 4],
    /// IPv4 destination address.
    pub daddr: [u8; 4],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// TCP flags (FIN=1, SYN=2, RST=4, PSH=8, ACK=16).
    pub flags: u16,
    /// Payload bytes.
    pub len: u32,
    /// `skbaddr` of the 2.9+ events.
    pub skbaddr: u64,
    /// `sk` of the old events.
    pub sk: u64,
    /// IPv4 identification.
    pub ip_id: u16,
}

/// TCP flag SYN.
pub const TCP_SYN: u16 = 2;
/// TCP flag PSH.
pub const TCP_PSH: u16 = 8;
/// TCP flag ACK.
pub const TCP_ACK: u16 = 16;
/// TCP flag FIN.
pub const TCP_FIN: u16 = 1;

/// The payload of `net_dev_queue`/`net_if_receive_skb` (or the old `inet_sock_local_*`).
pub fn net_payload(net: NetLayout, s: &TcpSeg, dev: &str) -> Vec<Value> {
    match net {
        NetLayout::NetworkHeader => {
            let tot = 20 + 20 + s.len;
            let tcp = Value::Struct(vec![
                Value::U64(s.sport as u64),
                Value::U64(s.dport as u64),
                Value::U64(s.seq as u64),
                Value::U64(s.ack as u64),
                Value::U64(5),
                Value::U64(0),
                Value::U64(s.flags as u64),
                Value::U64(64240),
                Value::U64((s.seq ^ s.ack) as u64 & 0xffff),
                Value::U64(0),
            ]);
            let bytes =
                |a: [u8; 4]| Value::Array(a.iter().map(|&b| Value::U64(b as u64)).collect());
            let ipv4 = Value::Struct(vec![
                Value::U64(4),
                Value::U64(5),
                Value::U64(0),
                Value::U64(tot as u64),
                Value::U64(s.ip_id as u64),
                Value::U64(0x4000),
                Value::U64(64),
                Value::U64(6),
                Value::U64((s.ip_id as u64 * 31) & 0xffff),
                bytes(s.saddr),
                bytes(s.daddr),
                Value::U64(1),
                Value::Variant(1, Box::new(tcp)),
            ]);
            vec![
                Value::U64(s.skbaddr),
                Value::U64(tot as u64 + 14),
                Value::str(dev),
                Value::U64(1),
                Value::Variant(1, Box::new(ipv4)),
            ]
        }
        NetLayout::InetSock => vec![
            Value::U64(s.sk),
            Value::U64(u32::from_be_bytes(s.saddr) as u64),
            Value::U64(u32::from_be_bytes(s.daddr) as u64),
            Value::U64(s.sport as u64),
            Value::U64(s.dport as u64),
            Value::U64(s.seq as u64),
            Value::U64(s.ack as u64),
            Value::U64((s.seq ^ s.ack) as u64 & 0xffff),
            Value::U64(64240),
            Value::U64(s.flags as u64),
        ],
    }
}
