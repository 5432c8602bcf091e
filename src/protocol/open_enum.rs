//! A string enum that keeps values it does not know.
//!
//! The protocol grows: a server on a newer revision may send a task status or
//! a tool's task support that this crate has never heard of. Failing the whole
//! message for one unfamiliar word would be the wrong trade, so these enums
//! carry such a value in an `Unknown` variant and send it back verbatim.

/// Declares an open string enum: named variants for the known values plus
/// `Unknown(String)`, with `as_str`, `Display`, `From<&str>`, `From<String>`
/// and serde as a plain JSON string.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate does not know, kept verbatim.
            Unknown(String),
        }

        impl $name {
            /// The value as it appears on the wire.
            $vis fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Unknown(s) => s.as_str(),
                }
            }

            /// Whether this is a value this crate does not know.
            $vis fn is_unknown(&self) -> bool {
                matches!(self, $name::Unknown(_))
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $wire => $name::$variant, )+
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match $name::from(s.as_str()) {
                    $name::Unknown(_) => $name::Unknown(s),
                    known => known,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok($name::from(s))
            }
        }
    };
}

pub(crate) use open_enum;
