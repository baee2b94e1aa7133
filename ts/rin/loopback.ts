/**
 * R69: the control daemon listens, and its clients connect, only on loopback. One check for both sides,
 * free of Node imports so the browser-safe client can use it.
 */

/** `localhost`, 127.0.0.0/8 in dotted decimal, or ::1 (bracketed or not, short or long form). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const octets = h.split('.');
  return octets.length === 4 && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255) && octets[0] === '127';
}
