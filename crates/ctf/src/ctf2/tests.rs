//! Unit tests of the CTF 2 front end.

use super::*;
