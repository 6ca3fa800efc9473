import { EVENT_TYPES } from '../../kernel/event-catalogue.js';
import { Pipeline, PipelineProvider } from '../../subgraphs/cicd/pipeline/pipeline.entity.js';
import { PipelineRun, RunStatus } from '../../subgraphs/cicd/run/run.entity.js';
import { runEventData } from '../../subgraphs/cicd/run/run.lifecycle.js';

describe('pipeline.run_completed', () => {
  it('carries exactly the data the event catalogue publishes', () => {
    const pipeline = Object.assign(new Pipeline(), { name: 'shop', repository: 'acme/shop', provider: PipelineProvider.host_a, tenantId: 't' });
    const run = Object.assign(new PipelineRun(), { pipelineId: pipeline.id, tenantId: 't', commit: 'abc', status: RunStatus.success, startedAt: new Date(), finishedAt: new Date(), durationSecs: 0 });
    const data = runEventData(run, pipeline);
    const schema = EVENT_TYPES['pipeline.run_completed']!.data as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(data).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(schema.required.every((key) => key in data)).toBe(true);
  });
});
