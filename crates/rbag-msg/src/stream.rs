//! Rewriting a message from one encoding or definition into another while reading it, without
//! building a [`Value`](crate::Value) tree: fields are read from the source and written to the target in one
//! pass, and primitive arrays (image data, point clouds) move as one block of bytes.
//!
//! It follows the same [`Plan`] as the tree path (decode → [`Plan::apply`] → encode) and gives
//! the same bytes; a test holds it to that over the corpus. It needs the plan to take the source
//! fields in order ([`Plan::streamable`]), which conversions between dialects always do.

use crate::codec::{CodecError, Encoding, Reader, Res, Writer};
use crate::definition::Array;
use crate::migrate::{fits, Elem, FieldPlan, Plan};
use crate::schema::{FieldLayout, Kind, Prim, Schema, MAX_DEPTH};

impl Plan {
    /// Whether every message takes its source fields in increasing order (no renames that
    /// reorder), so that one pass over the source can fill the target.
    pub fn streamable(&self) -> bool {
        self.msgs.iter().flatten().all(|m| {
            let copies = m.fields.iter().filter_map(|f| match f {
                FieldPlan::Copy { index, .. } => Some(*index),
                FieldPlan::Default(_) => None,
            });
            copies.clone().zip(copies.skip(1)).all(|(a, b)| a < b)
        })
    }
}

/// Transcodes one message of `from`'s root type into `to`'s, appending to `out`. The plan must
/// be [`streamable`](Plan::streamable) and built from these two schemas.
pub fn transcode(
    plan: &Plan,
    from: &Schema,
    from_encoding: Encoding,
    to: &Schema,
    to_encoding: Encoding,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let mut r = Reader::new(from, data, from_encoding, Vec::new(), Vec::new());
    r.header().map_err(|e| *e)?;
    let mut s = Stream { plan, from, to, r, w: Writer::new(to, out, to_encoding, false) };
    s.msg(to.root, 0).map_err(|e| *e)
}

struct Stream<'p, 'a, 'o> {
    plan: &'p Plan,
    from: &'p Schema,
    to: &'p Schema,
    r: Reader<'p, 'a>,
    w: Writer<'p, 'o>,
}

impl Stream<'_, '_, '_> {
    fn msg(&mut self, target: usize, depth: usize) -> Res<()> {
        if depth > MAX_DEPTH {
            return Err(self.w.err("nesting too deep".into()));
        }
        self.r.spend()?;
        let (plan, from, to) = (self.plan, self.from, self.to);
        let Some(mp) = plan.msgs[target].as_ref() else {
            return Err(self.w.err(format!("no plan for {}", to.msgs[target].name)));
        };
        let (src, dst) = (&from.msgs[mp.from], &to.msgs[target]);
        let mut next = 0;
        for (fp, tf) in mp.fields.iter().zip(&dst.fields) {
            match fp {
                FieldPlan::Default(v) => self.w.field(tf, v, depth).map_err(|e| e.within(&tf.name))?,
                FieldPlan::Copy { index, elem, .. } => {
                    while next < *index {
                        self.r.skip(&src.fields[next], depth).map_err(|e| e.within(&src.fields[next].name))?;
                        next += 1;
                    }
                    self.copy(&src.fields[*index], tf, *elem, depth).map_err(|e| e.within(&tf.name))?;
                    next = index + 1;
                }
            }
        }
        for f in &src.fields[next.min(src.fields.len())..] {
            self.r.skip(f, depth).map_err(|e| e.within(&f.name))?;
        }
        Ok(())
    }

    fn copy(&mut self, sf: &FieldLayout, tf: &FieldLayout, elem: Elem, depth: usize) -> Res<()> {
        let n = match sf.array {
            Array::Single => None,
            Array::Fixed(n) => {
                self.r.check_fixed(sf.kind, n)?;
                Some(n)
            }
            Array::Bounded(b) => Some(self.r.bounded_len(sf.kind, b)?),
            Array::Unbounded => Some(self.r.seq_len(sf.kind)?),
        };
        match (n, tf.array) {
            (None, Array::Single) => return self.one(sf.kind, tf.kind, elem, depth),
            (Some(n), to) => {
                fits(to, n).map_err(|e| self.w.err(e))?;
                if !matches!(to, Array::Fixed(_)) {
                    self.w.u32(n)?;
                }
            }
            (None, _) => return Err(self.w.err("a single value cannot become an array".into())),
        }
        let n = n.unwrap_or(0);
        match (sf.kind, tf.kind) {
            (Kind::Prim(p), Kind::Prim(q)) if p.size() == q.size() => self.block(p, q, n),
            _ => (0..n).try_for_each(|_| self.one(sf.kind, tf.kind, elem, depth)),
        }
    }

    /// `n` primitives as one block: swapped to little-endian only if the source is big-endian.
    fn block(&mut self, p: Prim, q: Prim, n: usize) -> Res<()> {
        if n == 0 {
            return Ok(());
        }
        self.r.align(p.size())?;
        let len = n.checked_mul(p.size()).ok_or_else(|| self.r.err(self.r.pos, format!("array of {n} is too long")))?;
        let raw = self.r.take(len)?;
        if self.r.be && p.size() > 1 {
            let mut le = raw.to_vec();
            le.chunks_exact_mut(p.size()).for_each(<[u8]>::reverse);
            self.w.le_bytes(q, &le);
        } else {
            self.w.le_bytes(q, raw);
        }
        Ok(())
    }

    fn one(&mut self, sk: Kind, tk: Kind, elem: Elem, depth: usize) -> Res<()> {
        match (sk, tk, elem) {
            (Kind::Prim(p), Kind::Prim(q), _) if p.size() == q.size() => {
                let le = self.r.prim_le(p)?;
                self.w.le_bytes(q, &le[..q.size()]);
                Ok(())
            }
            (Kind::String { wide, bound }, Kind::String { wide: to_wide, .. }, _) => {
                let s = self.r.string(wide, bound)?;
                self.w.string(&s, to_wide)
            }
            (Kind::Msg(_), Kind::Msg(_), Elem::Msg(j)) => self.msg(j, depth + 1),
            _ => Err(self.w.err("types differ".into())),
        }
    }
}
