//! TUN devices (Linux `drivers/net/tun.c`, Documentation/networking/tuntap.rst): a network
//! interface whose packets a process reads and writes as plain IPv4 datagrams (`IFF_TUN |
//! IFF_NO_PI`: no Ethernet header, no packet-information prefix).
//!
//! [`Tun::open_in`] creates the device inside a given network namespace: the calling thread
//! enters the namespace (`setns(2)` with `CLONE_NEWNET`), creates the device there and returns
//! to its own namespace, so no interface ever appears in the namespace the emulator runs in.
//! The device is not persistent: it disappears with the last open descriptor (the emulator's
//! exit, however it ends).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// `_IOW('T', 202, int)` (linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
/// `_IOW('T', 208, unsigned int)`.
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
/// Interface names are at most IFNAMSIZ - 1 = 15 bytes.
pub const MAX_IFNAME: usize = 15;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags in the union (40 bytes).
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device, non-blocking.
pub struct Tun {
    fd: OwnedFd,
    name: String,
    vnet: bool,
}

/// Enter the namespace at `ns`, run `f`, return to the thread's own namespace.
fn in_netns<T>(ns: &Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let own = File::open("/proc/thread-self/ns/net")?;
    let target = File::open(ns).map_err(|e| {
        io::Error::new(e.kind(), format!("network namespace {}: {e}", ns.display()))
    })?;
    // SAFETY: setns on descriptors we hold open; it changes only this thread's namespace.
    if unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("entering {}: {e}", ns.display()),
        ));
    }
    let r = f();
    // SAFETY: as above; returning to the namespace we came from.
    if unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        // The thread would go on in the wrong namespace: nothing sane can follow.
        panic!(
            "cannot return to the emulator's network namespace: {}",
            io::Error::last_os_error()
        );
    }
    r
}

impl Tun {
    /// Create TUN device `name` inside the network namespace whose handle is at `netns` (e.g.
    /// `/run/netns/NAME`, made by `ip netns add NAME`). The device starts down, unaddressed.
    /// With `offload`, every packet is preceded by a virtio-net header and the device offers
    /// checksum and TCP segmentation offload ([`crate::offload`]).
    pub fn open_in(netns: &Path, name: &str, offload: bool) -> io::Result<Tun> {
        if name.is_empty() || name.len() > MAX_IFNAME || name.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name {name:?}: 1 to {MAX_IFNAME} bytes, no '/'"),
            ));
        }
        in_netns(netns, || {
            // SAFETY: a plain open(2) of a path literal.
            let raw = unsafe {
                libc::open(
                    c"/dev/net/tun".as_ptr(),
                    libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
                )
            };
            if raw < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("/dev/net/tun: {e}")));
            }
            // SAFETY: `raw` is a descriptor we just opened and own.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mut req = IfReq {
                name: [0; 16],
                flags: IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 },
                _pad: [0; 22],
            };
            req.name[..name.len()].copy_from_slice(name.as_bytes());
            // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `req` is laid out as.
            if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
            }
            if offload {
                let features = TUN_F_CSUM | TUN_F_TSO4;
                // SAFETY: TUNSETOFFLOAD takes the feature bits by value.
                if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, features) } < 0 {
                    let e = io::Error::last_os_error();
                    return Err(io::Error::new(
                        e.kind(),
                        format!("TUNSETOFFLOAD {name}: {e}"),
                    ));
                }
            }
            Ok(Tun {
                fd,
                name: name.to_string(),
                vnet: offload,
            })
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Packets carry a virtio-net header ([`crate::offload::VNET_HDR_LEN`] bytes first).
    pub fn vnet(&self) -> bool {
        self.vnet
    }

    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Read one packet; `WouldBlock` when none is waiting.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Write one packet gathered from `parts` (`writev(2)`: one packet, not one per part).
    #[inline]
    pub fn write_parts(&self, parts: &[&[u8]]) -> io::Result<usize> {
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; 4];
        assert!(parts.len() <= iov.len(), "at most 4 parts");
        for (v, p) in iov.iter_mut().zip(parts) {
            v.iov_base = p.as_ptr() as *mut libc::c_void;
            v.iov_len = p.len();
        }
        // SAFETY: the first parts.len() iovecs point into live slices of their stated lengths,
        // which writev only reads.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), parts.len() as i32) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Write one packet (the host's stack receives it as if from the wire).
    #[inline]
    pub fn write(&self, pkt: &[u8]) -> io::Result<usize> {
        // SAFETY: writes pkt.len() bytes from pkt.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}
