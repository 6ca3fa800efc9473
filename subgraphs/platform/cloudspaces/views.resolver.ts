import { Args, ArgsType, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import {
  CloudSpaceViewsService,
  DEFAULT_LOG_TAIL,
  MAX_LOG_TAIL,
  type CronJobView,
  type DeploymentView,
  type EventView,
  type IngressRuleView,
  type IngressTlsView,
  type IngressView,
  type JobView,
  type ObjectReferenceView,
  type PersistentVolumeClaimView,
  type PodLogs,
  type PodView,
  type ServicePortView,
  type ServiceView,
} from './views.service.js';

const VCLUSTER = 'Virtual cluster of the CloudSpace it lives in.';
const NAMESPACE = 'Namespace inside that virtual cluster.';

@ObjectType({ description: 'A pod of a CloudSpace\'s virtual cluster.' })
export class KubePod implements PodView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'Pending, Running, Succeeded, Failed or Unknown.' }) phase!: string;
  @Field({ description: 'As `kubectl get pods` shows it: a waiting or terminated reason (CrashLoopBackOff, ImagePullBackOff, Completed...), Terminating, or the phase.' }) status!: string;
  @Field({ description: 'Ready containers over containers, e.g. `1/1`.' }) ready!: string;
  @Field(() => Int, { description: 'Restarts of all its containers.' }) restarts!: number;
  @Field(() => String, { nullable: true }) node!: string | null;
  @Field(() => String, { nullable: true }) ip!: string | null;
  @Field(() => [String]) images!: string[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType({ description: 'A Deployment of a CloudSpace\'s virtual cluster.' })
export class KubeDeployment implements DeploymentView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field(() => Int, { description: 'Desired replicas.' }) replicas!: number;
  @Field(() => Int, { description: 'Ready replicas.' }) ready!: number;
  @Field(() => Int, { description: 'Replicas running the current pod template.' }) updated!: number;
  @Field(() => Int, { description: 'Available replicas.' }) available!: number;
  @Field(() => [String]) images!: string[];
  @Field(() => Int, { nullable: true, description: 'Current rollout revision (deployment.kubernetes.io/revision).' }) revision!: number | null;
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType()
export class KubeServicePort implements ServicePortView {
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => Int) port!: number;
  @Field(() => String, { nullable: true, description: 'Container port number or name.' }) targetPort!: string | null;
  @Field() protocol!: string;
  @Field(() => Int, { nullable: true }) nodePort!: number | null;
}

@ObjectType({ description: 'A Service of a CloudSpace\'s virtual cluster.' })
export class KubeService implements ServiceView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'ClusterIP, NodePort, LoadBalancer or ExternalName.' }) type!: string;
  @Field(() => String, { nullable: true, description: '`None` for a headless service.' }) clusterIp!: string | null;
  @Field(() => [String], { description: 'External IPs and load-balancer addresses.' }) externalIps!: string[];
  @Field(() => [KubeServicePort]) ports!: KubeServicePort[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType()
export class KubeIngressTls implements IngressTlsView {
  @Field(() => [String]) hosts!: string[];
  @Field(() => String, { nullable: true }) secretName!: string | null;
}

@ObjectType({ description: 'Where an Ingress sends a host and path.' })
export class KubeIngressRule implements IngressRuleView {
  @Field(() => String, { nullable: true, description: 'Null: any host.' }) host!: string | null;
  @Field() path!: string;
  @Field(() => String, { nullable: true }) service!: string | null;
  @Field(() => String, { nullable: true, description: 'Service port number or name.' }) port!: string | null;
}

@ObjectType({ description: 'An Ingress of a CloudSpace\'s virtual cluster.' })
export class KubeIngress implements IngressView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true, description: 'Ingress class.' }) className!: string | null;
  @Field(() => [String]) hosts!: string[];
  @Field(() => [KubeIngressTls], { description: 'TLS: hosts and the Secret holding their certificate; empty without TLS.' }) tls!: KubeIngressTls[];
  @Field(() => [KubeIngressRule]) rules!: KubeIngressRule[];
  @Field(() => [String], { description: 'Load-balancer addresses.' }) addresses!: string[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType({ description: 'A PersistentVolumeClaim of a CloudSpace\'s virtual cluster.' })
export class KubePersistentVolumeClaim implements PersistentVolumeClaimView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'Pending, Bound or Lost.' }) phase!: string;
  @Field(() => String, { nullable: true, description: 'Size of the bound volume, e.g. 5Gi.' }) capacity!: string | null;
  @Field(() => String, { nullable: true, description: 'Size requested.' }) requested!: string | null;
  @Field(() => String, { nullable: true }) storageClass!: string | null;
  @Field(() => [String]) accessModes!: string[];
  @Field(() => String, { nullable: true, description: 'Name of the bound PersistentVolume.' }) volume!: string | null;
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType({ description: 'A Job of a CloudSpace\'s virtual cluster.' })
export class KubeJob implements JobView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'Running, Complete, Failed or Suspended.' }) status!: string;
  @Field(() => Int, { nullable: true, description: 'Successful pods wanted.' }) completions!: number | null;
  @Field(() => Int, { nullable: true }) parallelism!: number | null;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) active!: number;
  @Field(() => [String]) images!: string[];
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType({ description: 'A CronJob of a CloudSpace\'s virtual cluster.' })
export class KubeCronJob implements CronJobView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'Cron schedule, e.g. `0 3 * * *`.' }) schedule!: string;
  @Field(() => String, { nullable: true }) timeZone!: string | null;
  @Field() suspend!: boolean;
  @Field(() => Int, { description: 'Jobs running now.' }) active!: number;
  @Field(() => Date, { nullable: true, description: 'When a Job was last started; null before the first.' }) lastSchedule!: Date | null;
  @Field(() => Date, { nullable: true }) lastSuccessfulTime!: Date | null;
  @Field(() => [String]) images!: string[];
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType()
export class KubeObjectReference implements ObjectReferenceView {
  @Field(() => String, { nullable: true }) kind!: string | null;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) namespace!: string | null;
}

@ObjectType({ description: 'An event of a CloudSpace\'s virtual cluster.' })
export class KubeEvent implements EventView {
  @Field({ description: VCLUSTER }) vcluster!: string;
  @Field({ description: NAMESPACE }) namespace!: string;
  @Field() name!: string;
  @Field({ description: 'Normal or Warning.' }) type!: string;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => String, { nullable: true }) message!: string | null;
  @Field(() => KubeObjectReference, { description: 'The object the event is about.' }) involvedObject!: KubeObjectReference;
  @Field(() => Int, { description: 'How many times it happened.' }) count!: number;
  @Field(() => String, { nullable: true, description: 'Component that reported it (kubelet, deployment-controller...).' }) source!: string | null;
  @Field(() => Date, { nullable: true }) firstTimestamp!: Date | null;
  @Field(() => Date, { nullable: true }) lastTimestamp!: Date | null;
}

@ObjectType({ description: 'The end of a container\'s log.' })
export class PodLogLines implements PodLogs {
  @Field() vcluster!: string;
  @Field() namespace!: string;
  @Field() pod!: string;
  @Field() container!: string;
  @Field(() => [String], { description: 'Oldest first, without line ends.' }) lines!: string[];
}

const KubePodPage = PageOf(KubePod, 'KubePodPage');
const KubeEventPage = PageOf(KubeEvent, 'KubeEventPage');
const KubeDeploymentPage = PageOf(KubeDeployment, 'KubeDeploymentPage');
const KubeServicePage = PageOf(KubeService, 'KubeServicePage');
const KubeIngressPage = PageOf(KubeIngress, 'KubeIngressPage');
const KubePersistentVolumeClaimPage = PageOf(KubePersistentVolumeClaim, 'KubePersistentVolumeClaimPage');
const KubeJobPage = PageOf(KubeJob, 'KubeJobPage');
const KubeCronJobPage = PageOf(KubeCronJob, 'KubeCronJobPage');

@ArgsType()
class CloudSpaceViewArgs extends PageArgs {
  @Field(() => ID) cloudSpaceId!: string;
  @Field(() => String, { nullable: true, description: 'Only this virtual cluster; default: every ready one.' }) vcluster?: string | null;
  @Field(() => String, { nullable: true, description: 'Only this namespace (in each virtual cluster); default: all.' }) namespace?: string | null;
}

@ArgsType()
class PodLogArgs {
  @Field(() => ID) cloudSpaceId!: string;
  @Field() podName!: string;
  @Field(() => String, { nullable: true, description: 'Default: the CloudSpace\'s default virtual cluster.' }) vcluster?: string | null;
  @Field(() => String, { nullable: true, description: 'Default: `default`.' }) namespace?: string | null;
  @Field(() => String, { nullable: true, description: 'Default: the pod\'s default container (annotation kubectl.kubernetes.io/default-container), else its first.' }) container?: string | null;
  @Field(() => Int, { nullable: true, description: `Lines from the end, 0 to ${MAX_LOG_TAIL}; default ${DEFAULT_LOG_TAIL}.` }) tail?: number | null;
  @Field(() => Int, { nullable: true, description: 'Only lines of the last this many seconds.' }) sinceSeconds?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'Prefix each line with its RFC 3339 time.' }) timestamps?: boolean | null;
}

const service = (ctx: PlatformContext) => new CloudSpaceViewsService(ctx.em, ctx.identity!, ctx.platform);
const VIEW = 'Read from every ready virtual cluster of the CloudSpace (all namespaces), sorted by virtual cluster, namespace and name. 409 while the CloudSpace is not Ready, 503 when a virtual cluster cannot be reached.';

/** CloudSpace-wide views (spec 4.2): what runs in a CloudSpace's virtual clusters, and pod logs. */
@Resolver()
export class CloudSpaceViewsResolver {
  @Authorized('read')
  @Query(() => KubePodPage, { description: `Pods of a CloudSpace. ${VIEW}` })
  cloudSpacePods(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('pods', args);
  }

  @Authorized('read')
  @Query(() => KubeEventPage, { description: `Events of a CloudSpace. ${VIEW}` })
  cloudSpaceEvents(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('events', args);
  }

  @Authorized('read')
  @Query(() => KubeDeploymentPage, { description: `Deployments of a CloudSpace. ${VIEW}` })
  cloudSpaceDeployments(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('deployments', args);
  }

  @Authorized('read')
  @Query(() => KubeServicePage, { description: `Services of a CloudSpace. ${VIEW}` })
  cloudSpaceServices(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('services', args);
  }

  @Authorized('read')
  @Query(() => KubeIngressPage, { description: `Ingresses of a CloudSpace. ${VIEW}` })
  cloudSpaceIngresses(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('ingresses', args);
  }

  @Authorized('read')
  @Query(() => KubePersistentVolumeClaimPage, { description: `PersistentVolumeClaims of a CloudSpace. ${VIEW}` })
  cloudSpacePersistentVolumeClaims(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('pvcs', args);
  }

  @Authorized('read')
  @Query(() => KubeJobPage, { description: `Jobs of a CloudSpace. ${VIEW}` })
  cloudSpaceJobs(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('jobs', args);
  }

  @Authorized('read')
  @Query(() => KubeCronJobPage, { description: `CronJobs of a CloudSpace. ${VIEW}` })
  cloudSpaceCronJobs(@Args() args: CloudSpaceViewArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).view('cronjobs', args);
  }

  @Authorized('read')
  @Query(() => PodLogLines, { description: 'The last lines of a container\'s log, from any pod of the CloudSpace\'s virtual clusters. Following a log is a stream: the REST route with `follow=true`.' })
  cloudSpacePodLogs(@Args() args: PodLogArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).podLogs(args);
  }
}
