import { egressFolder, socketTarget } from './forwarder'
import { proxyVariables } from './proxy-variables'

/**
 * The relay under bubblewrap when socat is installed: socat listens on the sandbox's own loopback and
 * relays each connection to the proxy's socket, as the Node forwarder does, but it listens about 3 ms
 * after it starts where Node alone takes 20–30 ms to start (measured under bwrap here, and in bench/egress.ts). bwrap shows the host's /usr, so
 * socat's libraries are there; the binary itself is bound at a fixed path, wherever the host keeps it.
 */
export const socatTarget = `${egressFolder}/socat`

/** The sandbox shell's $0 while it starts the relay (what `ps` shows until the exec). */
const scriptName = 'toolport-egress'

// socat goes to the background from a subshell, so the sandbox's init adopts it and the command is
// not its parent (a command that waits for any child never meets it). Its port is ephemeral, and its
// own notice says when it listens and where (`-d -d`: "… N listening on AF=2 127.0.0.1:<port>", written
// once listen(2) has returned): its log goes through a pipe to a shell that reads up to that line, prints
// the port and then becomes `cat` to /dev/null for the rest of the log (which so never blocks socat),
// both in the background of a command substitution that ends when the port is printed. That wait blocks
// on the pipe: polling /proc/net/tcp with the shell's byte-by-byte reads instead cost more than socat's
// own start (5–8 ms against about 3 ms, measured under bwrap here). The command then replaces the shell
// (exec), so it keeps the shell's pid, its signals and its exit status reach bwrap unchanged.
// 256 KiB reads, as the Node forwarder's: a download is not cut into 8 KiB writes; and no Nagle delay
// on the loopback side (socat's default keeps it, which held each small TLS record back ~40 ms); and
// Node's listen backlog, where socat's default of 5 would refuse a burst of parallel connections.
const exports = Object.entries(proxyVariables('127.0.0.1:$port'))
  .map(([name, value]) => `${name}=${value}`)
  .join(' ')
const relay = `${socatTarget} -d -d -b 262144 TCP-LISTEN:0,bind=127.0.0.1,fork,nodelay,backlog=128 UNIX-CONNECT:${socketTarget}`
// biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for the shell
const announced = 'while read -r line; do case $line in *" listening on "*) echo "${line##*:}"; break ;; esac; done'
const script = `port=$( { ${relay} </dev/null 2>&1 >/dev/null & } | { ${announced}; exec cat >/dev/null; } & )
case $port in '' | *[!0-9]*) echo 'toolport: the egress relay (socat) could not listen' >&2; exit 125 ;; esac
export ${exports}
unset port
exec "$@"`

/** The argv that runs command (an argv itself) behind socat. */
export function socatRelayArgv(command: readonly string[]): string[] {
  return ['/bin/sh', '-c', script, scriptName, ...command]
}
