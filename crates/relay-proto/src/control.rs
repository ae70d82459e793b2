//! The consumer daemon → relay daemon protocol: commands on the control connection and their
//! replies, and the header of each packet on the data connection.
//!
//! A command is a [`ControlHeader`] (24 bytes) followed by `data_size` bytes of payload. This
//! is protocol 2.11 and later (what lttng-tools 2.11 to 2.14 speak: variable-length names in
//! session and stream creation, trace chunks); older peers are refused at [`cmd::VERSION`].

use crate::wire::{c_len, put_c, put_u32, put_u64, Reader};
use crate::{DecodeError, Decoded, MAX_PAYLOAD};

/// Command numbers (`enum lttcomm_relayd_command`).
pub mod cmd {
    /// Add a stream to the session.
    pub const ADD_STREAM: u32 = 1;
    /// Create a session.
    pub const CREATE_SESSION: u32 = 2;
    /// Start data (obsolete).
    pub const START_DATA: u32 = 3;
    /// Update sync info (obsolete).
    pub const UPDATE_SYNC_INFO: u32 = 4;
    /// Version negotiation, the first command.
    pub const VERSION: u32 = 5;
    /// A chunk of metadata (no reply).
    pub const SEND_METADATA: u32 = 6;
    /// A stream ends after a given packet.
    pub const CLOSE_STREAM: u32 = 7;
    /// Whether a stream's data is all written.
    pub const DATA_PENDING: u32 = 8;
    /// Whether a stream is quiescent (always yes once its data is written).
    pub const QUIESCENT_CONTROL: u32 = 9;
    /// Start of a data-pending check of a session.
    pub const BEGIN_DATA_PENDING: u32 = 10;
    /// End of a data-pending check of a session.
    pub const END_DATA_PENDING: u32 = 11;
    /// Add an index (never sent).
    pub const ADD_INDEX: u32 = 12;
    /// A packet's index.
    pub const SEND_INDEX: u32 = 13;
    /// Close an index (never sent).
    pub const CLOSE_INDEX: u32 = 14;
    /// List sessions (never sent).
    pub const LIST_SESSIONS: u32 = 15;
    /// All streams of a channel have been added.
    pub const STREAMS_SENT: u32 = 16;
    /// Restart a metadata stream (regeneration).
    pub const RESET_METADATA: u32 = 17;
    /// Move streams to a new trace chunk.
    pub const ROTATE_STREAMS: u32 = 18;
    /// Create a trace chunk.
    pub const CREATE_TRACE_CHUNK: u32 = 19;
    /// Close a trace chunk.
    pub const CLOSE_TRACE_CHUNK: u32 = 20;
    /// Whether a trace chunk exists.
    pub const TRACE_CHUNK_EXISTS: u32 = 21;
    /// The relay's configuration flags.
    pub const GET_CONFIGURATION: u32 = 22;
}

/// The close commands of [`cmd::CLOSE_TRACE_CHUNK`] (`enum lttng_trace_chunk_command_type`).
pub mod close_command {
    /// Move the chunk to the session's `archives/` (a rotation).
    pub const MOVE_TO_COMPLETED: u32 = 0;
    /// Leave the chunk where it is.
    pub const NO_OPERATION: u32 = 1;
    /// Delete the chunk's files (`lttng clear`).
    pub const DELETE: u32 = 2;
}

/// `LTTCOMM_RELAYD_CONFIGURATION_FLAG_CLEAR_ALLOWED`: the relay lets sessions be cleared.
pub const CONFIGURATION_FLAG_CLEAR_ALLOWED: u64 = 1;

/// `LTTNG_OK`, the success return code of replies.
pub const RET_OK: u32 = 10;
/// `LTTNG_ERR_UNK`, an unspecified error.
pub const RET_ERR_UNK: u32 = 11;
/// The protocol major version (LTTng 2).
pub const VERSION_MAJOR: u32 = 2;
/// The protocol minor version this crate speaks (lttng-tools 2.13).
pub const VERSION_MINOR: u32 = 13;
/// The oldest minor version whose formats this crate knows.
pub const MIN_MINOR: u32 = 11;

/// The longest path a reply may carry.
const MAX_PATH: u64 = 65536;

/// The header of every control command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlHeader {
    /// Unused (0).
    pub circuit_id: u64,
    /// Payload bytes after the header.
    pub data_size: u64,
    /// The command ([`cmd`]).
    pub cmd: u32,
    /// The command's version (0).
    pub cmd_version: u32,
}

impl ControlHeader {
    /// Encoded size.
    pub const SIZE: usize = 24;

    /// Decodes a header from the start of `buf`; a `data_size` above [`MAX_PAYLOAD`] is an error.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf, 0, "relayd command header");
        let circuit_id = r.u64()?;
        let h = r.command_header(MAX_PAYLOAD)?;
        Ok(ControlHeader {
            circuit_id,
            data_size: h.data_size,
            cmd: h.cmd,
            cmd_version: h.cmd_version,
        })
    }

    /// Appends the header.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.circuit_id);
        put_u64(out, self.data_size);
        put_u32(out, self.cmd);
        put_u32(out, self.cmd_version);
    }
}

/// The header of a packet on the data connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHeader {
    /// Unused (0).
    pub circuit_id: u64,
    /// The stream's handle (from the add-stream reply).
    pub stream_id: u64,
    /// The packet's sequence number in its stream.
    pub net_seq_num: u64,
    /// Packet bytes following.
    pub data_size: u32,
    /// Zero bytes the relay appends after them (the packet's unused end).
    pub padding_size: u32,
}

impl DataHeader {
    /// Encoded size.
    pub const SIZE: usize = 32;

    /// Decodes a header from the start of `buf`; a `data_size` above [`MAX_PAYLOAD`] is an error.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf, 0, "relayd data header");
        Ok(DataHeader {
            circuit_id: r.u64()?,
            stream_id: r.u64()?,
            net_seq_num: r.u64()?,
            data_size: r.size_u32("data_size", MAX_PAYLOAD)?,
            padding_size: r.size_u32("padding_size", MAX_PAYLOAD)?,
        })
    }

    /// Appends the header.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.circuit_id);
        put_u64(out, self.stream_id);
        put_u64(out, self.net_seq_num);
        put_u32(out, self.data_size);
        put_u32(out, self.padding_size);
    }
}

/// The fixed start of a [`cmd::SEND_METADATA`] payload, for a relay that writes the metadata
/// bytes after it as they arrive instead of decoding the whole command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataPrefix {
    /// The metadata stream's handle.
    pub stream_id: u64,
    /// Zero bytes to append after the metadata bytes.
    pub padding_size: u32,
}

impl MetadataPrefix {
    /// Encoded size.
    pub const SIZE: usize = 12;

    /// Decodes the prefix from the start of a payload.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf, ControlHeader::SIZE, "SEND_METADATA");
        Ok(MetadataPrefix {
            stream_id: r.u64()?,
            padding_size: r.size_u32("padding_size", MAX_PAYLOAD)?,
        })
    }
}

/// A session as the consumer creates it (`lttcomm_relayd_create_session_2_11`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateSession {
    /// The session's name.
    pub session_name: String,
    /// The traced host's name.
    pub hostname: String,
    /// The output path below the relay's output directory, when the user gave one.
    pub base_path: String,
    /// The live timer period in µs (0: not a live session).
    pub live_timer: u32,
    /// A snapshot session.
    pub snapshot: bool,
    /// Whether `session_name` already ends with the creation date.
    pub session_name_contains_creation_time: bool,
    /// The session daemon's UUID.
    pub sessiond_uuid: [u8; 16],
    /// The session daemon's id of the session.
    pub session_id: u64,
    /// Creation time, seconds since the epoch.
    pub creation_time: u64,
    /// The current trace chunk, if any.
    pub current_chunk_id: Option<u64>,
}

/// A stream as the consumer adds it (`lttcomm_relayd_add_stream_2_11`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddStream {
    /// File name of the stream (`channel0_0`, `metadata`).
    pub channel_name: String,
    /// Directory of the stream below the session's output (`ust/uid/0/64-bit`).
    pub pathname: String,
    /// Trace file size limit (0: none).
    pub tracefile_size: u64,
    /// Trace file count limit (0: none).
    pub tracefile_count: u64,
    /// The trace chunk it belongs to.
    pub trace_chunk_id: u64,
}

/// A packet's index (`lttcomm_relayd_index`, protocol 2.8+ adds the last two fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RelayIndex {
    /// The stream's handle.
    pub relay_stream_id: u64,
    /// The packet's sequence number in its stream (pairs the index with the data packet).
    pub net_seq_num: u64,
    /// Packet size in bits (0: a live beacon, no packet).
    pub packet_size: u64,
    /// Content size in bits.
    pub content_size: u64,
    /// First timestamp.
    pub timestamp_begin: u64,
    /// Last timestamp (of a beacon: up to when the stream is known to be empty).
    pub timestamp_end: u64,
    /// Events discarded so far.
    pub events_discarded: u64,
    /// The CTF stream class id.
    pub stream_id: u64,
    /// The CTF stream instance id.
    pub stream_instance_id: u64,
    /// The packet sequence number.
    pub packet_seq_num: u64,
}

impl RelayIndex {
    /// Size with the 2.8+ fields.
    pub const SIZE: usize = 80;
    /// Size without them.
    pub const SIZE_2_7: usize = 64;
}

/// Where a stream moves to the next trace chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotationPosition {
    /// The stream's handle.
    pub stream_id: u64,
    /// Sequence number of its first packet in the new chunk.
    pub rotate_at_seq_num: u64,
}

/// How `new_chunk_id` of a rotate-streams command is laid out: its `is_set` byte is followed by
/// padding in some releases (the field lacked its packed attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionalLayout {
    /// `is_set` then the value: 9 bytes.
    Packed,
    /// 3 bytes of padding (32-bit x86): 12 bytes.
    Pad3,
    /// 7 bytes of padding (x86-64, what Debian's 2.13 sends): 16 bytes.
    Pad7,
}

impl OptionalLayout {
    fn size(self) -> usize {
        match self {
            OptionalLayout::Packed => 9,
            OptionalLayout::Pad3 => 12,
            OptionalLayout::Pad7 => 16,
        }
    }
}

/// A control command with its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlCommand {
    /// The peer's protocol version.
    Version {
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
    },
    /// Query of the relay's configuration.
    GetConfiguration {
        /// Flags queried (none known: 0).
        query_flags: u64,
    },
    /// Create a session.
    CreateSession(CreateSession),
    /// Create a trace chunk.
    CreateTraceChunk {
        /// Its id.
        chunk_id: u64,
        /// Seconds since the epoch.
        creation_timestamp: u64,
        /// A name replacing the default one.
        override_name: Option<String>,
    },
    /// Add a stream.
    AddStream(AddStream),
    /// All streams of a channel are added.
    StreamsSent,
    /// A metadata chunk to append to a metadata stream.
    SendMetadata {
        /// The metadata stream's handle.
        stream_id: u64,
        /// Zero bytes to append after the payload.
        padding_size: u32,
        /// The metadata bytes.
        payload: Vec<u8>,
    },
    /// A packet's index.
    SendIndex(RelayIndex),
    /// A stream ends.
    CloseStream {
        /// Its handle.
        stream_id: u64,
        /// Sequence number of its last packet (`u64::MAX`: none; metadata).
        last_net_seq_num: u64,
    },
    /// Whether a stream's packets up to one are all written.
    DataPending {
        /// Its handle.
        stream_id: u64,
        /// The last packet sent.
        last_net_seq_num: u64,
    },
    /// Whether a stream is quiescent.
    QuiescentControl {
        /// Its handle.
        stream_id: u64,
    },
    /// Start of a data-pending check.
    BeginDataPending {
        /// The relay's session id.
        session_id: u64,
    },
    /// End of a data-pending check.
    EndDataPending {
        /// The relay's session id.
        session_id: u64,
    },
    /// Restart a metadata stream.
    ResetMetadata {
        /// The metadata stream's handle.
        stream_id: u64,
        /// The new metadata version.
        version: u64,
    },
    /// Move streams to a new trace chunk (or to none).
    RotateStreams {
        /// The new chunk.
        new_chunk_id: Option<u64>,
        /// How `new_chunk_id` was laid out.
        layout: OptionalLayout,
        /// Where each stream moves.
        positions: Vec<RotationPosition>,
    },
    /// Close a trace chunk.
    CloseTraceChunk {
        /// Its id.
        chunk_id: u64,
        /// Seconds since the epoch.
        close_timestamp: u64,
        /// `enum lttng_trace_chunk_command_type` (move to completed, delete…).
        close_command: Option<u32>,
    },
    /// Whether a trace chunk exists.
    TraceChunkExists {
        /// Its id.
        chunk_id: u64,
    },
    /// A command this crate does not interpret (obsolete or never sent ones), raw.
    Other {
        /// Its number.
        cmd: u32,
        /// Its payload.
        payload: Vec<u8>,
    },
}

impl ControlCommand {
    /// The command number.
    pub fn cmd(&self) -> u32 {
        use ControlCommand::*;
        match self {
            Version { .. } => cmd::VERSION,
            GetConfiguration { .. } => cmd::GET_CONFIGURATION,
            CreateSession(_) => cmd::CREATE_SESSION,
            CreateTraceChunk { .. } => cmd::CREATE_TRACE_CHUNK,
            AddStream(_) => cmd::ADD_STREAM,
            StreamsSent => cmd::STREAMS_SENT,
            SendMetadata { .. } => cmd::SEND_METADATA,
            SendIndex(_) => cmd::SEND_INDEX,
            CloseStream { .. } => cmd::CLOSE_STREAM,
            DataPending { .. } => cmd::DATA_PENDING,
            QuiescentControl { .. } => cmd::QUIESCENT_CONTROL,
            BeginDataPending { .. } => cmd::BEGIN_DATA_PENDING,
            EndDataPending { .. } => cmd::END_DATA_PENDING,
            ResetMetadata { .. } => cmd::RESET_METADATA,
            RotateStreams { .. } => cmd::ROTATE_STREAMS,
            CloseTraceChunk { .. } => cmd::CLOSE_TRACE_CHUNK,
            TraceChunkExists { .. } => cmd::TRACE_CHUNK_EXISTS,
            Other { cmd, .. } => *cmd,
        }
    }

    /// Whether the relay answers this command (all but metadata).
    pub fn has_reply(&self) -> bool {
        self.cmd() != cmd::SEND_METADATA
    }

    /// Decodes one command (header and payload) from the start of `buf`.
    pub fn decode(buf: &[u8]) -> Decoded<Self> {
        let h = ControlHeader::decode(buf)?;
        let total = ControlHeader::SIZE + h.data_size as usize;
        if buf.len() < total {
            return Err(DecodeError::Incomplete {
                needed: total - buf.len(),
            });
        }
        let c = Self::decode_payload(&h, &buf[ControlHeader::SIZE..total])?;
        Ok((c, total))
    }

    /// Decodes the payload of the command `h` announces (exactly `data_size` bytes).
    pub fn decode_payload(h: &ControlHeader, payload: &[u8]) -> Result<Self, DecodeError> {
        let base = ControlHeader::SIZE;
        let c = match h.cmd {
            cmd::VERSION => {
                let mut r = Reader::new(payload, base, "VERSION");
                let c = ControlCommand::Version {
                    major: r.u32()?,
                    minor: r.u32()?,
                };
                r.end()?;
                c
            }
            cmd::GET_CONFIGURATION => {
                let mut r = Reader::new(payload, base, "GET_CONFIGURATION");
                let c = ControlCommand::GetConfiguration {
                    query_flags: r.u64()?,
                };
                r.end()?;
                c
            }
            cmd::CREATE_SESSION => {
                ControlCommand::CreateSession(decode_create_session(payload, base)?)
            }
            cmd::CREATE_TRACE_CHUNK => {
                let mut r = Reader::new(payload, base, "CREATE_TRACE_CHUNK");
                let chunk_id = r.u64()?;
                let creation_timestamp = r.u64()?;
                let len = r.u32()? as usize;
                let override_name = if len == 0 {
                    None
                } else {
                    Some(r.string(len, "override_name")?)
                };
                r.end()?;
                ControlCommand::CreateTraceChunk {
                    chunk_id,
                    creation_timestamp,
                    override_name,
                }
            }
            cmd::ADD_STREAM => {
                let mut r = Reader::new(payload, base, "ADD_STREAM");
                let channel_len = r.u32()? as usize;
                let path_len = r.u32()? as usize;
                let tracefile_size = r.u64()?;
                let tracefile_count = r.u64()?;
                let trace_chunk_id = r.u64()?;
                let channel_name = r.string(channel_len, "channel_name")?;
                let pathname = r.string(path_len, "pathname")?;
                r.end()?;
                ControlCommand::AddStream(AddStream {
                    channel_name,
                    pathname,
                    tracefile_size,
                    tracefile_count,
                    trace_chunk_id,
                })
            }
            cmd::STREAMS_SENT => {
                Reader::new(payload, base, "STREAMS_SENT").end()?;
                ControlCommand::StreamsSent
            }
            cmd::SEND_METADATA => {
                let mut r = Reader::new(payload, base, "SEND_METADATA");
                let stream_id = r.u64()?;
                let padding_size = r.size_u32("padding_size", MAX_PAYLOAD)?;
                ControlCommand::SendMetadata {
                    stream_id,
                    padding_size,
                    payload: payload[r.pos()..].to_vec(),
                }
            }
            cmd::SEND_INDEX => {
                let mut r = Reader::new(payload, base, "SEND_INDEX");
                if payload.len() != RelayIndex::SIZE && payload.len() != RelayIndex::SIZE_2_7 {
                    return Err(r.invalid(
                        "length",
                        0,
                        format!(
                            "{} bytes is neither {} nor {}",
                            payload.len(),
                            RelayIndex::SIZE_2_7,
                            RelayIndex::SIZE
                        ),
                    ));
                }
                let mut i = RelayIndex {
                    relay_stream_id: r.u64()?,
                    net_seq_num: r.u64()?,
                    packet_size: r.u64()?,
                    content_size: r.u64()?,
                    timestamp_begin: r.u64()?,
                    timestamp_end: r.u64()?,
                    events_discarded: r.u64()?,
                    stream_id: r.u64()?,
                    ..RelayIndex::default()
                };
                if r.remaining() > 0 {
                    i.stream_instance_id = r.u64()?;
                    i.packet_seq_num = r.u64()?;
                }
                ControlCommand::SendIndex(i)
            }
            cmd::CLOSE_STREAM | cmd::DATA_PENDING => {
                let name = if h.cmd == cmd::CLOSE_STREAM {
                    "CLOSE_STREAM"
                } else {
                    "DATA_PENDING"
                };
                let mut r = Reader::new(payload, base, name);
                let (stream_id, last_net_seq_num) = (r.u64()?, r.u64()?);
                r.end()?;
                if h.cmd == cmd::CLOSE_STREAM {
                    ControlCommand::CloseStream {
                        stream_id,
                        last_net_seq_num,
                    }
                } else {
                    ControlCommand::DataPending {
                        stream_id,
                        last_net_seq_num,
                    }
                }
            }
            cmd::QUIESCENT_CONTROL
            | cmd::BEGIN_DATA_PENDING
            | cmd::END_DATA_PENDING
            | cmd::TRACE_CHUNK_EXISTS => {
                let name = match h.cmd {
                    cmd::QUIESCENT_CONTROL => "QUIESCENT_CONTROL",
                    cmd::BEGIN_DATA_PENDING => "BEGIN_DATA_PENDING",
                    cmd::END_DATA_PENDING => "END_DATA_PENDING",
                    _ => "TRACE_CHUNK_EXISTS",
                };
                let mut r = Reader::new(payload, base, name);
                let v = r.u64()?;
                r.end()?;
                match h.cmd {
                    cmd::QUIESCENT_CONTROL => ControlCommand::QuiescentControl { stream_id: v },
                    cmd::BEGIN_DATA_PENDING => ControlCommand::BeginDataPending { session_id: v },
                    cmd::END_DATA_PENDING => ControlCommand::EndDataPending { session_id: v },
                    _ => ControlCommand::TraceChunkExists { chunk_id: v },
                }
            }
            cmd::RESET_METADATA => {
                let mut r = Reader::new(payload, base, "RESET_METADATA");
                let c = ControlCommand::ResetMetadata {
                    stream_id: r.u64()?,
                    version: r.u64()?,
                };
                r.end()?;
                c
            }
            cmd::ROTATE_STREAMS => decode_rotate(payload, base)?,
            cmd::CLOSE_TRACE_CHUNK => {
                let mut r = Reader::new(payload, base, "CLOSE_TRACE_CHUNK");
                let chunk_id = r.u64()?;
                let close_timestamp = r.u64()?;
                let set = r.flag("close_command.is_set")?;
                let value = r.u32()?;
                r.end()?;
                ControlCommand::CloseTraceChunk {
                    chunk_id,
                    close_timestamp,
                    close_command: set.then_some(value),
                }
            }
            other => ControlCommand::Other {
                cmd: other,
                payload: payload.to_vec(),
            },
        };
        Ok(c)
    }

    /// Appends the command with its header.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        ControlHeader {
            circuit_id: 0,
            data_size: 0,
            cmd: self.cmd(),
            cmd_version: 0,
        }
        .encode(out);
        let body = out.len();
        match self {
            ControlCommand::Version { major, minor } => {
                put_u32(out, *major);
                put_u32(out, *minor);
            }
            ControlCommand::GetConfiguration { query_flags } => put_u64(out, *query_flags),
            ControlCommand::CreateSession(s) => {
                put_u32(out, c_len(&s.session_name));
                put_u32(out, c_len(&s.hostname));
                put_u32(
                    out,
                    if s.base_path.is_empty() {
                        0
                    } else {
                        c_len(&s.base_path)
                    },
                );
                put_u32(out, s.live_timer);
                out.push(u8::from(s.snapshot));
                out.push(u8::from(s.session_name_contains_creation_time));
                out.extend_from_slice(&s.sessiond_uuid);
                put_u64(out, s.session_id);
                put_u64(out, s.creation_time);
                out.push(u8::from(s.current_chunk_id.is_some()));
                put_u64(out, s.current_chunk_id.unwrap_or(0));
                put_c(out, &s.session_name);
                put_c(out, &s.hostname);
                if !s.base_path.is_empty() {
                    put_c(out, &s.base_path);
                }
            }
            ControlCommand::CreateTraceChunk {
                chunk_id,
                creation_timestamp,
                override_name,
            } => {
                put_u64(out, *chunk_id);
                put_u64(out, *creation_timestamp);
                match override_name {
                    Some(n) => {
                        put_u32(out, c_len(n));
                        put_c(out, n);
                    }
                    None => put_u32(out, 0),
                }
            }
            ControlCommand::AddStream(s) => {
                put_u32(out, c_len(&s.channel_name));
                put_u32(out, c_len(&s.pathname));
                put_u64(out, s.tracefile_size);
                put_u64(out, s.tracefile_count);
                put_u64(out, s.trace_chunk_id);
                put_c(out, &s.channel_name);
                put_c(out, &s.pathname);
            }
            ControlCommand::StreamsSent => {}
            ControlCommand::SendMetadata {
                stream_id,
                padding_size,
                payload,
            } => {
                put_u64(out, *stream_id);
                put_u32(out, *padding_size);
                out.extend_from_slice(payload);
            }
            ControlCommand::SendIndex(i) => {
                for v in [
                    i.relay_stream_id,
                    i.net_seq_num,
                    i.packet_size,
                    i.content_size,
                    i.timestamp_begin,
                    i.timestamp_end,
                    i.events_discarded,
                    i.stream_id,
                    i.stream_instance_id,
                    i.packet_seq_num,
                ] {
                    put_u64(out, v);
                }
            }
            ControlCommand::CloseStream {
                stream_id,
                last_net_seq_num,
            }
            | ControlCommand::DataPending {
                stream_id,
                last_net_seq_num,
            } => {
                put_u64(out, *stream_id);
                put_u64(out, *last_net_seq_num);
            }
            ControlCommand::QuiescentControl { stream_id: v }
            | ControlCommand::BeginDataPending { session_id: v }
            | ControlCommand::EndDataPending { session_id: v }
            | ControlCommand::TraceChunkExists { chunk_id: v } => put_u64(out, *v),
            ControlCommand::ResetMetadata { stream_id, version } => {
                put_u64(out, *stream_id);
                put_u64(out, *version);
            }
            ControlCommand::RotateStreams {
                new_chunk_id,
                layout,
                positions,
            } => {
                put_u32(out, u32::try_from(positions.len()).unwrap_or(u32::MAX));
                out.push(u8::from(new_chunk_id.is_some()));
                out.resize(out.len() + layout.size() - 9, 0);
                put_u64(out, new_chunk_id.unwrap_or(0));
                for p in positions {
                    put_u64(out, p.stream_id);
                    put_u64(out, p.rotate_at_seq_num);
                }
            }
            ControlCommand::CloseTraceChunk {
                chunk_id,
                close_timestamp,
                close_command,
            } => {
                put_u64(out, *chunk_id);
                put_u64(out, *close_timestamp);
                out.push(u8::from(close_command.is_some()));
                put_u32(out, close_command.unwrap_or(0));
            }
            ControlCommand::Other { payload, .. } => out.extend_from_slice(payload),
        }
        let size = (out.len() - body) as u64;
        out[start + 8..start + 16].copy_from_slice(&size.to_be_bytes());
    }
}

fn decode_create_session(payload: &[u8], base: usize) -> Result<CreateSession, DecodeError> {
    let mut r = Reader::new(payload, base, "CREATE_SESSION");
    let name_len = r.u32()? as usize;
    let host_len = r.u32()? as usize;
    let path_len = r.u32()? as usize;
    let live_timer = r.u32()?;
    let snapshot = r.flag("snapshot")?;
    let session_name_contains_creation_time = r.flag("session_name_contains_creation_time")?;
    let sessiond_uuid = r.array()?;
    let session_id = r.u64()?;
    let creation_time = r.u64()?;
    let chunk_set = r.flag("current_chunk_id.is_set")?;
    let chunk = r.u64()?;
    let at = r.pos();
    let session_name = r.string(name_len, "session_name")?;
    if session_name.is_empty() {
        return Err(r.invalid("session_name", at, "empty"));
    }
    let at = r.pos();
    let hostname = r.string(host_len, "hostname")?;
    if hostname.is_empty() {
        return Err(r.invalid("hostname", at, "empty"));
    }
    let base_path = r.string(path_len, "base_path")?;
    r.end()?;
    Ok(CreateSession {
        session_name,
        hostname,
        base_path,
        live_timer,
        snapshot,
        session_name_contains_creation_time,
        sessiond_uuid,
        session_id,
        creation_time,
        current_chunk_id: chunk_set.then_some(chunk),
    })
}

fn decode_rotate(payload: &[u8], base: usize) -> Result<ControlCommand, DecodeError> {
    let mut r = Reader::new(payload, base, "ROTATE_STREAMS");
    let count = r.u32()? as usize;
    // The layout of `new_chunk_id` is told by what is left once the positions are counted.
    let rest = (payload.len() - 4) as u128;
    let optional = rest.checked_sub(count as u128 * 16);
    let layout = match optional {
        Some(9) => OptionalLayout::Packed,
        Some(12) => OptionalLayout::Pad3,
        Some(16) => OptionalLayout::Pad7,
        _ => {
            return Err(r.invalid(
                "stream_count",
                0,
                format!(
                    "{count} positions do not fit a payload of {} bytes",
                    payload.len()
                ),
            ))
        }
    };
    let set = r.flag("new_chunk_id.is_set")?;
    r.bytes(layout.size() - 9)?;
    let value = r.u64()?;
    let mut positions = Vec::with_capacity(count);
    for _ in 0..count {
        positions.push(RotationPosition {
            stream_id: r.u64()?,
            rotate_at_seq_num: r.u64()?,
        });
    }
    r.end()?;
    Ok(ControlCommand::RotateStreams {
        new_chunk_id: set.then_some(value),
        layout,
        positions,
    })
}

/// The relay's reply to a control command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControlReply {
    /// A return code only (`lttcomm_relayd_generic_reply`); for data pending, 1 means pending.
    Generic {
        /// [`RET_OK`], an error code, or a yes/no answer.
        ret_code: u32,
    },
    /// The relay's version.
    Version {
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
    },
    /// The session created.
    CreateSession {
        /// The relay's id of the session.
        session_id: u64,
        /// Return code.
        ret_code: u32,
        /// Where its trace goes, relative to the relay's output directory.
        output_path: String,
    },
    /// The stream added.
    AddStream {
        /// The stream's handle.
        handle: u64,
        /// Return code.
        ret_code: u32,
    },
    /// The trace chunk closed.
    CloseTraceChunk {
        /// Return code.
        ret_code: u32,
        /// The chunk's path.
        path: String,
    },
    /// Whether a chunk exists.
    TraceChunkExists {
        /// Return code.
        ret_code: u32,
        /// The answer.
        exists: bool,
    },
    /// The relay's configuration.
    GetConfiguration {
        /// Return code.
        ret_code: u32,
        /// `LTTCOMM_RELAYD_CONFIGURATION_FLAG_*`.
        flags: u64,
    },
}

impl ControlReply {
    /// Decodes the reply to command `cmd` from the start of `buf`.
    pub fn decode(cmd: u32, buf: &[u8]) -> Decoded<Self> {
        let mut r = Reader::new(buf, 0, "relayd reply");
        let reply = match cmd {
            cmd::VERSION => ControlReply::Version {
                major: r.u32()?,
                minor: r.u32()?,
            },
            cmd::CREATE_SESSION => {
                let session_id = r.u64()?;
                let ret_code = r.u32()?;
                let len = r.size_u32("output_path_length", MAX_PATH)?;
                ControlReply::CreateSession {
                    session_id,
                    ret_code,
                    output_path: r.string(len as usize, "output_path")?,
                }
            }
            cmd::ADD_STREAM => ControlReply::AddStream {
                handle: r.u64()?,
                ret_code: r.u32()?,
            },
            cmd::CLOSE_TRACE_CHUNK => {
                let ret_code = r.u32()?;
                let len = r.size_u32("path_length", MAX_PATH)?;
                ControlReply::CloseTraceChunk {
                    ret_code,
                    path: r.string(len as usize, "path")?,
                }
            }
            cmd::TRACE_CHUNK_EXISTS => ControlReply::TraceChunkExists {
                ret_code: r.u32()?,
                exists: r.flag("trace_chunk_exists")?,
            },
            cmd::GET_CONFIGURATION => ControlReply::GetConfiguration {
                ret_code: r.u32()?,
                flags: r.u64()?,
            },
            _ => ControlReply::Generic { ret_code: r.u32()? },
        };
        Ok((reply, r.pos()))
    }

    /// Appends the reply.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ControlReply::Generic { ret_code } => put_u32(out, *ret_code),
            ControlReply::Version { major, minor } => {
                put_u32(out, *major);
                put_u32(out, *minor);
            }
            ControlReply::CreateSession {
                session_id,
                ret_code,
                output_path,
            } => {
                put_u64(out, *session_id);
                put_u32(out, *ret_code);
                put_u32(out, c_len(output_path));
                put_c(out, output_path);
            }
            ControlReply::AddStream { handle, ret_code } => {
                put_u64(out, *handle);
                put_u32(out, *ret_code);
            }
            ControlReply::CloseTraceChunk { ret_code, path } => {
                put_u32(out, *ret_code);
                put_u32(out, c_len(path));
                put_c(out, path);
            }
            ControlReply::TraceChunkExists { ret_code, exists } => {
                put_u32(out, *ret_code);
                out.push(u8::from(*exists));
            }
            ControlReply::GetConfiguration { ret_code, flags } => {
                put_u32(out, *ret_code);
                put_u64(out, *flags);
            }
        }
    }
}
