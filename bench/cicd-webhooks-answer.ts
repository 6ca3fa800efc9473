/**
 * autocannon's `verifyBody` for the `webhook` target of `npm run bench -- cicd-webhooks`, handed
 * to its worker thread by path (see cicd-webhooks-push.ts): an answer is right only when the push
 * was recorded as one new queued run. A `duplicate` (the delivery id was seen before), `ignored`
 * (wrong branch, unknown event) or anything else counts as a mismatch, which fails the run.
 */

/** The facade's answer to a recorded push: the receipt in snake_case, one run per pipeline. */
const RECORDED = /^\{"outcome":"recorded","event":"push","reason":null,"runs":\[\{"pipeline_id":"[0-9a-f-]{36}","run_id":"[0-9a-f-]{36}","status":"queued"\}\]\}$/;

export function isRecordedPush(body: string): boolean {
  return RECORDED.test(body);
}

export { isRecordedPush as 'module.exports' };
