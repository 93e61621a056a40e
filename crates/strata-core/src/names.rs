//! `named_enum!`: closed sets of lowercase names (memory types, tiers, actors) with one
//! definition of their spelling for storage, JSON, the CLI and error messages.

/// Declares a fieldless enum whose variants have fixed lowercase names, with `ALL`,
/// `as_str`, `Display`, `FromStr` (a clear error listing the valid names) and serde.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "lowercase")]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The lowercase name used in storage, the CLI and JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::error::Error::invalid(format!(
                        "unknown {} '{}' (expected {})",
                        $what,
                        $crate::error::excerpt(s),
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }
    };
}

pub(crate) use named_enum;
