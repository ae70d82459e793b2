//! Big-endian readers and writers over byte slices.

use crate::DecodeError;

/// A cursor over one message's bytes; offsets in errors count from `base`.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    pub(crate) message: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: usize, message: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            message,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn invalid(
        &self,
        field: &'static str,
        at: usize,
        reason: impl Into<String>,
    ) -> DecodeError {
        DecodeError::Invalid {
            message: self.message,
            field,
            offset: self.base + at,
            reason: reason.into(),
        }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Incomplete {
                needed: n - self.remaining(),
            });
        }
        let b = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// A `u64` size field, refused above `limit` (before anything that size is allocated).
    pub(crate) fn size_u64(&mut self, field: &'static str, limit: u64) -> Result<u64, DecodeError> {
        let at = self.pos;
        let v = self.u64()?;
        if v > limit {
            return Err(self.invalid(field, at, format!("{v} bytes is more than {limit}")));
        }
        Ok(v)
    }

    /// A `u32` size field, refused above `limit`.
    pub(crate) fn size_u32(&mut self, field: &'static str, limit: u64) -> Result<u32, DecodeError> {
        let at = self.pos;
        let v = self.u32()?;
        if u64::from(v) > limit {
            return Err(self.invalid(field, at, format!("{v} bytes is more than {limit}")));
        }
        Ok(v)
    }

    /// A `u32` count of items of `item_size` bytes each that follow: refused above `limit`,
    /// and incomplete until they are all there.
    pub(crate) fn count(
        &mut self,
        field: &'static str,
        limit: u32,
        item_size: usize,
    ) -> Result<u32, DecodeError> {
        let at = self.pos;
        let n = self.u32()?;
        if n > limit {
            return Err(self.invalid(field, at, format!("{n} items is more than {limit}")));
        }
        let need = n as usize * item_size;
        if self.remaining() < need {
            return Err(DecodeError::Incomplete {
                needed: need - self.remaining(),
            });
        }
        Ok(n)
    }

    /// The part control and viewer request headers share: the payload size (refused above
    /// `limit`), the command and its version.
    pub(crate) fn command_header(&mut self, limit: u64) -> Result<CommandHeader, DecodeError> {
        Ok(CommandHeader {
            data_size: self.size_u64("data_size", limit)?,
            cmd: self.u32()?,
            cmd_version: self.u32()?,
        })
    }

    /// A boolean byte (0 or 1).
    pub(crate) fn flag(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.invalid(field, at, format!("{v} is neither 0 nor 1"))),
        }
    }

    /// A string of `len` bytes, the last one its NUL terminator (`len` 0: empty).
    pub(crate) fn string(
        &mut self,
        len: usize,
        field: &'static str,
    ) -> Result<String, DecodeError> {
        let at = self.pos;
        let b = self.bytes(len)?;
        let Some((&last, text)) = b.split_last() else {
            return Ok(String::new());
        };
        if last != 0 {
            return Err(self.invalid(field, at, "not NUL-terminated"));
        }
        if text.contains(&0) {
            return Err(self.invalid(field, at, "NUL byte inside the string"));
        }
        String::from_utf8(text.to_vec()).map_err(|_| self.invalid(field, at, "not UTF-8"))
    }

    /// A fixed-size `char[N]` field: the text before its first NUL.
    pub(crate) fn fixed_string(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> Result<String, DecodeError> {
        let at = self.pos;
        let b = self.bytes(n)?;
        let end = b
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| self.invalid(field, at, "not NUL-terminated"))?;
        String::from_utf8(b[..end].to_vec()).map_err(|_| self.invalid(field, at, "not UTF-8"))
    }

    /// The rest must be empty.
    pub(crate) fn end(&self) -> Result<(), DecodeError> {
        if self.remaining() != 0 {
            return Err(self.invalid(
                "length",
                self.pos,
                format!("{} unexpected trailing bytes", self.remaining()),
            ));
        }
        Ok(())
    }
}

/// What [`Reader::command_header`] reads.
pub(crate) struct CommandHeader {
    pub(crate) data_size: u64,
    pub(crate) cmd: u32,
    pub(crate) cmd_version: u32,
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// `s` in a `char[n]` field: truncated to `n - 1` bytes (at a character boundary), then NULs.
pub(crate) fn put_fixed(out: &mut Vec<u8>, s: &str, n: usize) {
    let mut end = s.len().min(n - 1);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&s.as_bytes()[..end]);
    out.resize(out.len() + n - end, 0);
}

/// A NUL-terminated string's length as sent (with its NUL).
pub(crate) fn c_len(s: &str) -> u32 {
    u32::try_from(s.len() + 1).unwrap_or(u32::MAX)
}

pub(crate) fn put_c(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}
