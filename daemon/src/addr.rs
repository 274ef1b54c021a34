//! Daemon addresses (`unix:PATH`, `tcp:HOST:PORT`), listeners and streams.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Addr {
    Unix(PathBuf),
    Tcp(String),
}

impl Addr {
    pub fn parse(s: &str) -> Result<Addr, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err("unix: needs a socket path".into());
            }
            Ok(Addr::Unix(PathBuf::from(p)))
        } else if let Some(a) = s.strip_prefix("tcp:") {
            Ok(Addr::Tcp(a.to_string()))
        } else {
            Err(format!("address '{s}' must be unix:PATH or tcp:HOST:PORT"))
        }
    }
}

pub enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub fn connect(addr: &Addr) -> std::io::Result<Stream> {
        Ok(match addr {
            Addr::Unix(p) => Stream::Unix(UnixStream::connect(p)?),
            Addr::Tcp(a) => Stream::Tcp(TcpStream::connect(a.as_str())?),
        })
    }

    pub fn try_clone(&self) -> std::io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }

    /// Ends both directions: a thread reading it sees the end at once.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// The peer's IP address (TCP); none for a unix socket.
    pub fn peer_ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Stream::Unix(_) => None,
            Stream::Tcp(s) => s.peer_addr().ok().map(|a| a.ip()),
        }
    }

    pub fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_write_timeout(t),
            Stream::Tcp(s) => s.set_write_timeout(t),
        }
    }

    pub fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tcp(s) => s.set_read_timeout(t),
        }
    }

    fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tcp(s) => s.set_nonblocking(on),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.flush(),
            Stream::Tcp(s) => s.flush(),
        }
    }
}

pub enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    /// Binds; TCP only on loopback unless `allow_remote`. The unix socket
    /// is bound under a temp name, made 0600, then renamed into place, so
    /// it is never reachable with looser permissions.
    pub fn bind(addr: &Addr, allow_remote: bool) -> Result<Listener, String> {
        match addr {
            Addr::Unix(path) => {
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    if !meta.file_type().is_socket() {
                        return Err(format!("'{}' exists and is not a socket", path.display()));
                    }
                    if UnixStream::connect(path).is_ok() {
                        return Err(format!(
                            "a daemon is already listening on '{}'",
                            path.display()
                        ));
                    }
                    std::fs::remove_file(path).map_err(|e| {
                        format!("cannot remove stale socket '{}': {e}", path.display())
                    })?;
                }
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
                let _ = std::fs::remove_file(&tmp);
                let l = UnixListener::bind(&tmp)
                    .map_err(|e| format!("cannot bind '{}': {e}", path.display()))?;
                let setup = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
                    .and_then(|()| std::fs::rename(&tmp, path));
                if let Err(e) = setup {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(format!("cannot create socket '{}': {e}", path.display()));
                }
                Ok(Listener::Unix(l, path.clone()))
            }
            Addr::Tcp(a) => {
                let addrs: Vec<_> = a
                    .to_socket_addrs()
                    .map_err(|e| format!("bad TCP address '{a}': {e}"))?
                    .collect();
                if addrs.is_empty() {
                    return Err(format!("'{a}' resolves to no address"));
                }
                if !allow_remote && addrs.iter().any(|s| !s.ip().is_loopback()) {
                    return Err(format!(
                        "'{a}' is not a loopback address: pass --allow-remote (with \
                         --auth-token-file) to listen on it"
                    ));
                }
                let l =
                    TcpListener::bind(&addrs[..]).map_err(|e| format!("cannot bind '{a}': {e}"))?;
                Ok(Listener::Tcp(l))
            }
        }
    }

    /// The address clients should use (the real port for `tcp:...:0`).
    pub fn display(&self) -> String {
        match self {
            Listener::Unix(_, p) => format!("unix:{}", p.display()),
            Listener::Tcp(l) => match l.local_addr() {
                Ok(a) => format!("tcp:{a}"),
                Err(_) => "tcp:?".into(),
            },
        }
    }

    pub fn set_nonblocking(&self) -> std::io::Result<()> {
        match self {
            Listener::Unix(l, _) => l.set_nonblocking(true),
            Listener::Tcp(l) => l.set_nonblocking(true),
        }
    }

    /// Waits until a connection is pending or `timeout` passes (so the
    /// accept loop can look at its shutdown flag without sleeping through
    /// arriving connections).
    pub fn wait_pending(&self, timeout: Duration) -> std::io::Result<bool> {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Listener::Unix(l, _) => l.as_raw_fd(),
            Listener::Tcp(l) => l.as_raw_fd(),
        };
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        match n {
            n if n > 0 => Ok(true),
            0 => Ok(false),
            _ => {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::Interrupted => Ok(false),
                    _ => Err(e),
                }
            }
        }
    }

    /// A blocking stream, or `WouldBlock` when nobody is waiting.
    pub fn accept(&self) -> std::io::Result<Stream> {
        let s = match self {
            Listener::Unix(l, _) => Stream::Unix(l.accept()?.0),
            Listener::Tcp(l) => Stream::Tcp(l.accept()?.0),
        };
        s.set_nonblocking(false)?;
        Ok(s)
    }

    /// Removes the socket file (unix).
    pub fn remove(&self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}
