/**
 * HTTP to LLM providers under the address policy: the host is resolved, every address checked,
 * and the connection goes to the address that was checked (the lookup hook of `node:http`), so a
 * DNS answer that changes after validation cannot redirect the request. Redirects are not followed.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressPolicy, refusalOf } from './address-policy.ts';

export class AddressRefused extends Error {
  override name = 'AddressRefused';
}

/** Resolves `host` and returns its addresses, or throws AddressRefused naming the first refused one. */
export async function checkHost(policy: AddressPolicy, host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses =
    isIP(bare) !== 0
      ? [bare]
      : await new Promise<string[]>((resolve, reject) =>
          dnsLookup(bare, { all: true }, (err, list) =>
            err ? reject(err) : resolve(list.map((a) => a.address)),
          ),
        );
  for (const address of addresses) {
    const refusal = refusalOf(policy, host, address);
    if (refusal) throw new AddressRefused(refusal);
  }
  return addresses;
}

function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    checkHost(policy, hostname).then(
      (addresses) => {
        const list: LookupAddress[] = addresses.map((address) => ({
          address,
          family: isIP(address) as 4 | 6,
        }));
        if ((options as { all?: boolean }).all)
          (callback as (e: null, l: LookupAddress[]) => void)(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}

/** Agents whose connections go only to addresses the policy allows (for clients that take agents). */
export function guardedAgents(policy: AddressPolicy): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const lookup = guardedLookup(policy);
  return { httpAgent: new HttpAgent({ lookup }), httpsAgent: new HttpsAgent({ lookup }) };
}

export interface JsonResponse {
  status: number;
  body: unknown;
  text: string;
}

/** POSTs JSON; resolves with the status and the parsed body (undefined when not JSON). */
export function postJson(
  policy: AddressPolicy,
  url: URL,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<JsonResponse> {
  return postJsonText(policy, url, headers, JSON.stringify(body), timeoutMs);
}

/** POSTs JSON already serialised (a signature covers these exact bytes). */
export async function postJsonText(
  policy: AddressPolicy,
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<JsonResponse> {
  // A literal address is connected to without a lookup: check it here.
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) await checkHost(policy, url.hostname);
  const payload = Buffer.from(body);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<JsonResponse>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length },
        lookup: guardedLookup(policy),
        timeout: timeoutMs,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
