//! TCP_NODELAY on the pool's connections.
//!
//! sqlx 0.9.0 no longer sets it (transact-rs/sqlx#4335; fixed upstream by #4336, not yet
//! released). Without it, a message to the server longer than one TCP segment — an insert
//! carrying a group's vectors — leaves its tail in the kernel until the server acknowledges
//! the rest, which Linux delays by 40 ms: on loopback a group of 32 adds took 110 ms instead
//! of 25. sqlx gives no access to its socket, so after each connect the pool asks the server
//! for the connection's client port and sets the option on this process's socket with that
//! local port and the server's port as its peer. Remove once sqlx sets it again.

use sqlx::PgConnection;

/// Disables Nagle's algorithm on `conn`'s socket, whose server listens on `server_port`.
/// Nothing to do over a Unix socket; a socket that cannot be found is left as it is (the
/// connection works, only slower for long messages).
pub(super) async fn disable_nagle(
    conn: &mut PgConnection,
    server_port: u16,
) -> Result<(), sqlx::Error> {
    let client_port: Option<i32> = sqlx::query_scalar("SELECT inet_client_port()")
        .fetch_one(conn)
        .await?;
    if let Some(client_port) = client_port.and_then(|port| u16::try_from(port).ok())
        && !set_nodelay(client_port, server_port)
    {
        tracing::debug!(
            client_port,
            "no socket of this process to set TCP_NODELAY on"
        );
    }
    Ok(())
}

/// Sets TCP_NODELAY on the socket of this process from local port `local` to remote port
/// `remote`; whether one was found.
#[cfg(target_os = "linux")]
fn set_nodelay(local: u16, remote: u16) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return false;
    };
    for entry in entries.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        if port_of(fd, libc::getsockname) == Some(local)
            && port_of(fd, libc::getpeername) == Some(remote)
        {
            let on: libc::c_int = 1;
            // SAFETY: a plain system call on a descriptor number with a pointer to a local
            // int of the length given; a descriptor closed meanwhile only makes it fail.
            let set = unsafe {
                libc::setsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    (&raw const on).cast(),
                    size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            return set == 0;
        }
    }
    false
}

#[cfg(not(target_os = "linux"))]
fn set_nodelay(_local: u16, _remote: u16) -> bool {
    false
}

/// The TCP port of one end of socket `fd` (`getsockname` or `getpeername`), if it is an
/// IPv4 or IPv6 socket.
#[cfg(target_os = "linux")]
fn port_of(
    fd: libc::c_int,
    name: unsafe extern "C" fn(
        libc::c_int,
        *mut libc::sockaddr,
        *mut libc::socklen_t,
    ) -> libc::c_int,
) -> Option<u16> {
    // SAFETY: all-zero bytes are a valid `sockaddr_storage`.
    let mut address: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut length = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `address` is writable for `length` bytes, as the call requires; a descriptor
    // that is not a socket (or was closed meanwhile) only makes it fail.
    if unsafe { name(fd, (&raw mut address).cast(), &mut length) } != 0 {
        return None;
    }
    match libc::c_int::from(address.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a `sockaddr_in`.
            let ipv4 = unsafe { &*(&raw const address).cast::<libc::sockaddr_in>() };
            Some(u16::from_be(ipv4.sin_port))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a `sockaddr_in6`.
            let ipv6 = unsafe { &*(&raw const address).cast::<libc::sockaddr_in6>() };
            Some(u16::from_be(ipv6.sin6_port))
        }
        _ => None,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::set_nodelay;

    fn nodelay(stream: &std::net::TcpStream) -> bool {
        stream.nodelay().unwrap()
    }

    #[test]
    fn finds_the_socket_by_its_ports_and_sets_the_option() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server_port = listener.local_addr().unwrap().port();
        let stream = std::net::TcpStream::connect(("127.0.0.1", server_port)).unwrap();
        let (_accepted, _) = listener.accept().unwrap();
        assert!(!nodelay(&stream), "Nagle is on by default");
        let local = stream.local_addr().unwrap().port();
        assert!(
            !set_nodelay(local, server_port.wrapping_add(1)),
            "another peer"
        );
        assert!(!nodelay(&stream));
        assert!(set_nodelay(local, server_port));
        assert!(nodelay(&stream));
    }
}
