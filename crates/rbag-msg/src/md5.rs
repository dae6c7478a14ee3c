//! ROS 1 MD5 sums, computed as genmsg does: constants first (`type NAME=value`), then fields,
//! with primitive types written as declared (`float64[9] covariance`) and each nested message
//! replaced by its own MD5 (array suffix dropped), comments and extra whitespace removed.

use md5::{Digest, Md5};

use crate::registry::Registry;
use crate::{Error, Result};

impl Registry {
    /// The MD5 sum of `pkg/Type`, resolving nested types in this registry.
    pub fn md5(&self, full_name: &str) -> Result<String> {
        self.md5_depth(full_name, 0, &mut std::collections::HashMap::new())
    }

    /// `memo` holds sums already computed: a type used twice per level is summed once.
    fn md5_depth(
        &self,
        full_name: &str,
        depth: usize,
        memo: &mut std::collections::HashMap<String, String>,
    ) -> Result<String> {
        if let Some(sum) = memo.get(full_name) {
            return Ok(sum.clone());
        }
        if depth > 64 {
            return Err(Error::Recursive { name: full_name.to_string() });
        }
        let def = self.require(full_name, None)?;
        let mut lines = Vec::with_capacity(def.constants.len() + def.fields.len());
        for c in &def.constants {
            lines.push(format!("{} {}={}", c.ty, c.name, c.value));
        }
        for f in &def.fields {
            if f.ty.is_primitive() {
                let suffix = match f.ty.array {
                    crate::definition::Array::Single => String::new(),
                    crate::definition::Array::Fixed(n) => format!("[{n}]"),
                    crate::definition::Array::Bounded(n) => format!("[<={n}]"),
                    crate::definition::Array::Unbounded => "[]".into(),
                };
                lines.push(format!("{}{suffix} {}", f.ty.base, f.name));
            } else {
                let dep = self.resolve(&f.ty.base, full_name);
                let sum = self.md5_depth(&dep, depth + 1, memo).map_err(|e| match e {
                    Error::UnknownType { name, .. } => {
                        Error::UnknownType { name, context: Some(format!("field {} of {full_name}", f.name)) }
                    }
                    other => other,
                })?;
                lines.push(format!("{sum} {}", f.name));
            }
        }
        let mut h = Md5::new();
        h.update(lines.join("\n").as_bytes());
        let sum: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        memo.insert(full_name.to_string(), sum.clone());
        Ok(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_msgs_string_and_header() {
        let mut r = Registry::new(crate::Dialect::Ros1);
        r.add("std_msgs/String", "string data\n").unwrap();
        r.add("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n").unwrap();
        assert_eq!(r.md5("std_msgs/String").unwrap(), "992ce8a1687cec8c8bd883ec73ca41d1");
        assert_eq!(r.md5("std_msgs/Header").unwrap(), "2176decaecbce78abc3b96ef049fabed");
        r.add("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n").unwrap();
        assert_eq!(r.md5("geometry_msgs/Point").unwrap(), "4a842b65f413084dc2b10fb484ea7f17");
    }

    #[test]
    fn a_missing_nested_type_is_named() {
        let mut r = Registry::new(crate::Dialect::Ros1);
        r.add("a/B", "Header header\nC c\n").unwrap();
        let e = r.md5("a/B").unwrap_err().to_string();
        assert!(e.contains("std_msgs/Header") && e.contains("a/B"), "{e}");
    }
}
