//! SIGINT, SIGTERM, SIGHUP and SIGUSR1 for the live verbs: a handler only sets a flag (the only
//! async-signal-safe thing to do), and the verb's loop polls the flags.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static USR1: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGUSR1 {
        USR1.store(true, Ordering::SeqCst);
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
}

/// Installs the handlers. A second SIGINT still stops the process at the next poll, it does not
/// kill it mid-write: the bag is always closed. SIGHUP (the terminal or ssh session went away)
/// stops too, where its default action would leave the bag unindexed.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1] {
        // SAFETY: `on_signal` only stores to atomics, which is async-signal-safe; the
        // sigaction struct is zeroed and then filled as sigaction(2) requires.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Whether SIGUSR1 arrived since the last call.
pub fn take_usr1() -> bool {
    USR1.swap(false, Ordering::SeqCst)
}
