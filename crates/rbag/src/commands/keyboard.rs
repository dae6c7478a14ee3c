//! Single-key controls on a terminal (space, `s`, arrows), read in raw mode on a thread. The
//! terminal's settings are restored when the guard drops.

use std::io::Read;
use std::sync::mpsc::Sender;

/// A key the live verbs act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Space,
    Char(char),
    Up,
    Down,
    Right,
}

/// Restores the terminal's mode on drop.
pub struct RawMode {
    saved: libc::termios,
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restores the settings read from the same descriptor in `start`.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.saved);
        }
    }
}

/// When stdin is a terminal, switches it to non-canonical, no-echo mode and sends each key to
/// `keys` from a reader thread. Returns `None` (and reads nothing) otherwise.
pub fn start(keys: Sender<Key>) -> Option<RawMode> {
    // SAFETY: isatty/tcgetattr/tcsetattr on stdin with a zeroed termios they fill in.
    let saved = unsafe {
        if libc::isatty(libc::STDIN_FILENO) != 1 {
            return None;
        }
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(libc::STDIN_FILENO, &mut t) != 0 {
            return None;
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO);
        t.c_cc[libc::VMIN] = 1;
        t.c_cc[libc::VTIME] = 0;
        if libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &t) != 0 {
            return None;
        }
        saved
    };
    let _ = std::thread::Builder::new().name("keyboard".into()).spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut byte = [0u8; 1];
        let mut escape = 0u8;
        while stdin.read_exact(&mut byte).is_ok() {
            let key = match (escape, byte[0]) {
                (0, 0x1b) => {
                    escape = 1;
                    continue;
                }
                (1, b'[') => {
                    escape = 2;
                    continue;
                }
                (2, b'A') => Some(Key::Up),
                (2, b'B') => Some(Key::Down),
                (2, b'C') => Some(Key::Right),
                (2, _) => None,
                (_, b' ') => Some(Key::Space),
                (_, c) if c.is_ascii_graphic() => Some(Key::Char(c as char)),
                _ => None,
            };
            escape = 0;
            if let Some(k) = key {
                if keys.send(k).is_err() {
                    break;
                }
            }
        }
    });
    Some(RawMode { saved })
}
