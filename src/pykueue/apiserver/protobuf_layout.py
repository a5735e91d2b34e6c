"""The protobuf message layouts of the built-in kinds, as Kubernetes' ``generated.proto`` defines them.

Owned by ``apiserver/``; data only, read by :mod:`pykueue.apiserver.protobuf`, which parses it once at
import. Every kind that client-go's typed clients (and kubectl's typed subcommands) may send as
``application/vnd.kubernetes.protobuf`` has its message here, with every field of the official
client's model of that kind (a test walks the two side by side), plus ``DeleteOptions``, the body
of typed deletes and delete-collections. A field marked ``-`` or ``~`` is known but not decoded: a
body that carries it is refused with 415, never silently dropped.

Field numbers are Kubernetes' own (stable across releases: protobuf never renumbers a field).
"""

from __future__ import annotations

__all__ = ["KINDS", "LAYOUT", "REVIEW_KINDS"]

# Notation: "<number> <jsonName><flags>[:<type>]", comma separated. Flags: "*" repeated, "?" kept
# even when zero (Go pointer, or a field without omitempty). "<number> ^<Message>" embeds a message
# inline (Go's embedded structs). Types: s string (default), i int32/int64, b bool, t Time,
# mt MicroTime, q Quantity, ios IntOrString, y bytes, {s} {y} {q} maps to string/bytes/Quantity,
# - known but not decoded (415), ~ a non-pointer struct not decoded (415 unless empty: gogo writes it
# empty when the object has none), or a message name.
LAYOUT: dict[str, str] = {
    "TypeMeta": "1 apiVersion, 2 kind",
    "ObjectMeta": "1 name, 2 generateName, 3 namespace, 4 selfLink, 5 uid, 6 resourceVersion, 7 generation:i, "
    "8 creationTimestamp:t, 9 deletionTimestamp:t, 10 deletionGracePeriodSeconds?:i, 11 labels:{s}, "
    "12 annotations:{s}, 13 ownerReferences*:OwnerReference, 14 finalizers*, 17 managedFields:-",
    "OwnerReference": "1 kind, 3 name, 4 uid, 5 apiVersion, 6 controller?:b, 7 blockOwnerDeletion?:b",
    "LabelSelector": "1 matchLabels:{s}, 2 matchExpressions*:LabelSelectorRequirement",
    "LabelSelectorRequirement": "1 key, 2 operator, 3 values*",
    # core/v1 and scheduling/v1 kinds
    "Namespace": "1 metadata:ObjectMeta, 2 spec:NamespaceSpec, 3 status:NamespaceStatus",
    "NamespaceSpec": "1 finalizers*",
    "NamespaceStatus": "1 phase, 2 conditions:-",
    "ConfigMap": "1 metadata:ObjectMeta, 2 data:{s}, 3 binaryData:{y}, 4 immutable?:b",
    "Secret": "1 metadata:ObjectMeta, 2 data:{y}, 3 type, 4 stringData:{s}, 5 immutable?:b",
    "PriorityClass": "1 metadata:ObjectMeta, 2 value?:i, 3 globalDefault:b, 4 description, 5 preemptionPolicy?",
    # batch/v1
    "Job": "1 metadata:ObjectMeta, 2 spec:JobSpec, 3 status:JobStatus",
    "JobSpec": "1 parallelism?:i, 2 completions?:i, 3 activeDeadlineSeconds?:i, 4 selector:LabelSelector, "
    "5 manualSelector?:b, 6 template:PodTemplateSpec, 7 backoffLimit?:i, 8 ttlSecondsAfterFinished?:i, "
    "9 completionMode?, 10 suspend?:b, 11 podFailurePolicy:-, 12 backoffLimitPerIndex?:i, "
    "13 maxFailedIndexes?:i, 14 podReplacementPolicy?, 15 managedBy?, 16 successPolicy:-",
    "JobStatus": "1 conditions*:JobCondition, 2 startTime:t, 3 completionTime:t, 4 active:i, 5 succeeded:i, "
    "6 failed:i, 7 completedIndexes, 8 uncountedTerminatedPods:UncountedTerminatedPods, 9 ready?:i, "
    "10 failedIndexes?, 11 terminating?:i",
    "JobCondition": "1 type, 2 status, 3 lastProbeTime:t, 4 lastTransitionTime:t, 5 reason, 6 message",
    "UncountedTerminatedPods": "1 succeeded*, 2 failed*",
    # core/v1 Pod and what it embeds
    "Pod": "1 metadata:ObjectMeta, 2 spec:PodSpec, 3 status:PodStatus",
    "PodTemplateSpec": "1 metadata:ObjectMeta, 2 spec:PodSpec",
    "PodSpec": "1 volumes*:Volume, 2 containers*:Container, 3 restartPolicy, 4 terminationGracePeriodSeconds?:i, "
    "5 activeDeadlineSeconds?:i, 6 dnsPolicy, 7 nodeSelector:{s}, 8 serviceAccountName, "
    "9 serviceAccount, 10 nodeName, 11 hostNetwork:b, 12 hostPID:b, 13 hostIPC:b, "
    "14 securityContext:PodSecurityContext, 15 imagePullSecrets*:LocalObjectReference, 16 hostname, "
    "17 subdomain, 18 affinity:Affinity, 19 schedulerName, 20 initContainers*:Container, "
    "21 automountServiceAccountToken?:b, 22 tolerations*:Toleration, 23 hostAliases*:HostAlias, "
    "24 priorityClassName, 25 priority?:i, 26 dnsConfig:PodDNSConfig, 27 shareProcessNamespace?:b, "
    "28 readinessGates*:PodReadinessGate, 29 runtimeClassName?, 30 enableServiceLinks?:b, "
    "31 preemptionPolicy?, 32 overhead:{q}, 33 topologySpreadConstraints*:TopologySpreadConstraint, "
    "34 ephemeralContainers:-, 35 setHostnameAsFQDN?:b, 36 os:PodOS, 37 hostUsers?:b, "
    "38 schedulingGates*:PodSchedulingGate, 39 resourceClaims*:PodResourceClaim, "
    "40 resources:ResourceRequirements, 41 hostnameOverride?, 42 workloadRef:-",
    "PodStatus": "1 phase, 2 conditions*:PodCondition, 3 message, 4 reason, 5 hostIP, 6 podIP, 7 startTime:t, "
    "8 containerStatuses:-, 9 qosClass, 10 initContainerStatuses:-, 11 nominatedNodeName, "
    "12 podIPs*:PodIP, 13 ephemeralContainerStatuses:-, 14 resize, 15 resourceClaimStatuses:-, "
    "16 hostIPs*:PodIP, 17 observedGeneration:i, 18 extendedResourceClaimStatus:-, "
    "19 allocatedResources:{q}, 20 resources:ResourceRequirements",
    "PodCondition": "1 type, 2 status, 3 lastProbeTime:t, 4 lastTransitionTime:t, 5 reason, 6 message, "
    "7 observedGeneration:i",
    "PodIP": "1 ip",
    "Container": "1 name, 2 image, 3 command*, 4 args*, 5 workingDir, 6 ports*:ContainerPort, 7 env*:EnvVar, "
    "8 resources:ResourceRequirements, 9 volumeMounts*:VolumeMount, 10 livenessProbe:Probe, "
    "11 readinessProbe:Probe, 12 lifecycle:Lifecycle, 13 terminationMessagePath, 14 imagePullPolicy, "
    "15 securityContext:SecurityContext, 16 stdin:b, 17 stdinOnce:b, 18 tty:b, "
    "19 envFrom*:EnvFromSource, 20 terminationMessagePolicy, 21 volumeDevices*:VolumeDevice, "
    "22 startupProbe:Probe, 23 resizePolicy*:ContainerResizePolicy, 24 restartPolicy?, "
    "25 restartPolicyRules:-",
    "ContainerPort": "1 name, 2 hostPort:i, 3 containerPort?:i, 4 protocol, 5 hostIP",
    "EnvVar": "1 name, 2 value, 3 valueFrom:EnvVarSource",
    "EnvVarSource": "1 fieldRef:ObjectFieldSelector, 2 resourceFieldRef:ResourceFieldSelector, "
    "3 configMapKeyRef:ConfigMapKeySelector, 4 secretKeyRef:ConfigMapKeySelector, 5 fileKeyRef:-",
    "ObjectFieldSelector": "1 apiVersion, 2 fieldPath",
    "ResourceFieldSelector": "1 containerName, 2 resource, 3 divisor:q",
    "ConfigMapKeySelector": "1 ^LocalObjectReference, 2 key, 3 optional?:b",  # SecretKeySelector: same layout
    "LocalObjectReference": "1 name",
    "EnvFromSource": "1 prefix, 2 configMapRef:EnvSource, 3 secretRef:EnvSource",
    "EnvSource": "1 ^LocalObjectReference, 2 optional?:b",  # ConfigMapEnvSource and SecretEnvSource
    "ResourceRequirements": "1 limits:{q}, 2 requests:{q}, 3 claims*:ResourceClaim",
    "ResourceClaim": "1 name, 2 request",
    "VolumeMount": "1 name, 2 readOnly:b, 3 mountPath, 4 subPath, 5 mountPropagation?, 6 subPathExpr, "
    "7 recursiveReadOnly?",
    "VolumeDevice": "1 name, 2 devicePath",
    "ContainerResizePolicy": "1 resourceName, 2 restartPolicy",
    "Probe": "1 ^ProbeHandler, 2 initialDelaySeconds:i, 3 timeoutSeconds:i, 4 periodSeconds:i, "
    "5 successThreshold:i, 6 failureThreshold:i, 7 terminationGracePeriodSeconds?:i",
    "ProbeHandler": "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, 4 grpc:GRPCAction",
    "Lifecycle": "1 postStart:LifecycleHandler, 2 preStop:LifecycleHandler, 3 stopSignal?",
    "LifecycleHandler": "1 exec:ExecAction, 2 httpGet:HTTPGetAction, 3 tcpSocket:TCPSocketAction, 4 sleep:SleepAction",
    "ExecAction": "1 command*",
    "HTTPGetAction": "1 path, 2 port?:ios, 3 host, 4 scheme, 5 httpHeaders*:HTTPHeader",
    "HTTPHeader": "1 name, 2 value?",
    "TCPSocketAction": "1 port?:ios, 2 host",
    "GRPCAction": "1 port?:i, 2 service?",
    "SleepAction": "1 seconds?:i",
    "SecurityContext": "1 capabilities:Capabilities, 2 privileged?:b, 3 seLinuxOptions:SELinuxOptions, "
    "4 runAsUser?:i, 5 runAsNonRoot?:b, 6 readOnlyRootFilesystem?:b, "
    "7 allowPrivilegeEscalation?:b, 8 runAsGroup?:i, 9 procMount?, 10 windowsOptions:-, "
    "11 seccompProfile:Profile, 12 appArmorProfile:Profile, 13 ulimits:-",
    "PodSecurityContext": "1 seLinuxOptions:SELinuxOptions, 2 runAsUser?:i, 3 runAsNonRoot?:b, "
    "4 supplementalGroups*:i, 5 fsGroup?:i, 6 runAsGroup?:i, 7 sysctls*:Sysctl, "
    "8 windowsOptions:-, 9 fsGroupChangePolicy?, 10 seccompProfile:Profile, "
    "11 appArmorProfile:Profile, 12 supplementalGroupsPolicy?, 13 seLinuxChangePolicy?",
    "Capabilities": "1 add*, 2 drop*",
    "SELinuxOptions": "1 user, 2 role, 3 type, 4 level",
    "Profile": "1 type, 2 localhostProfile?",  # SeccompProfile and AppArmorProfile
    "Sysctl": "1 name?, 2 value?",
    "Affinity": "1 nodeAffinity:NodeAffinity, 2 podAffinity:PodAffinity, 3 podAntiAffinity:PodAffinity",
    "NodeAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution:NodeSelector, "
    "2 preferredDuringSchedulingIgnoredDuringExecution*:PreferredSchedulingTerm",
    "NodeSelector": "1 nodeSelectorTerms*:NodeSelectorTerm",
    "NodeSelectorTerm": "1 matchExpressions*:NodeSelectorRequirement, 2 matchFields*:NodeSelectorRequirement",
    "NodeSelectorRequirement": "1 key, 2 operator, 3 values*",
    "PreferredSchedulingTerm": "1 weight?:i, 2 preference:NodeSelectorTerm",
    "PodAffinity": "1 requiredDuringSchedulingIgnoredDuringExecution*:PodAffinityTerm, "
    "2 preferredDuringSchedulingIgnoredDuringExecution*:WeightedPodAffinityTerm",
    "PodAffinityTerm": "1 labelSelector:LabelSelector, 2 namespaces*, 3 topologyKey, "
    "4 namespaceSelector:LabelSelector, 5 matchLabelKeys*, 6 mismatchLabelKeys*",
    "WeightedPodAffinityTerm": "1 weight?:i, 2 podAffinityTerm:PodAffinityTerm",
    "Toleration": "1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds?:i",
    "HostAlias": "1 ip, 2 hostnames*",
    "PodDNSConfig": "1 nameservers*, 2 searches*, 3 options*:PodDNSConfigOption",
    "PodDNSConfigOption": "1 name, 2 value?",
    "PodReadinessGate": "1 conditionType?",
    "TopologySpreadConstraint": "1 maxSkew?:i, 2 topologyKey?, 3 whenUnsatisfiable?, 4 labelSelector:LabelSelector, "
    "5 minDomains?:i, 6 nodeAffinityPolicy?, 7 nodeTaintsPolicy?, 8 matchLabelKeys*",
    "PodOS": "1 name?",
    "PodSchedulingGate": "1 name?",
    "PodResourceClaim": "1 name, 3 resourceClaimName?, 4 resourceClaimTemplateName?",
    "Volume": "1 name, 2 ^VolumeSource",
    "VolumeSource": "1 hostPath:HostPathVolumeSource, 2 emptyDir:EmptyDirVolumeSource, 3 gcePersistentDisk:-, "
    "4 awsElasticBlockStore:-, 5 gitRepo:-, 6 secret:SecretVolumeSource, 7 nfs:NFSVolumeSource, "
    "8 iscsi:-, 9 glusterfs:-, 10 persistentVolumeClaim:PVCVolumeSource, 11 rbd:-, "
    "12 flexVolume:-, 13 cinder:-, 14 cephfs:-, 15 flocker:-, 16 downwardAPI:DownwardAPIVolumeSource, "
    "17 fc:-, 18 azureFile:-, 19 configMap:ConfigMapVolumeSource, 20 vsphereVolume:-, 21 quobyte:-, "
    "22 azureDisk:-, 23 photonPersistentDisk:-, 24 portworxVolume:-, 25 scaleIO:-, "
    "26 projected:ProjectedVolumeSource, 27 storageos:-, 28 csi:-, 29 ephemeral:-, "
    "30 image:ImageVolumeSource",
    "HostPathVolumeSource": "1 path, 2 type?",
    "EmptyDirVolumeSource": "1 medium, 2 sizeLimit:q",
    "SecretVolumeSource": "1 secretName, 2 items*:KeyToPath, 3 defaultMode?:i, 4 optional?:b",
    "ConfigMapVolumeSource": "1 ^LocalObjectReference, 2 items*:KeyToPath, 3 defaultMode?:i, 4 optional?:b",
    "KeyToPath": "1 key, 2 path, 3 mode?:i",
    "NFSVolumeSource": "1 server, 2 path, 3 readOnly:b",
    "PVCVolumeSource": "1 claimName, 2 readOnly:b",
    "DownwardAPIVolumeSource": "1 items*:DownwardAPIVolumeFile, 2 defaultMode?:i",
    "DownwardAPIVolumeFile": "1 path, 2 fieldRef:ObjectFieldSelector, 3 resourceFieldRef:ResourceFieldSelector, "
    "4 mode?:i",
    "ProjectedVolumeSource": "1 sources*:VolumeProjection, 2 defaultMode?:i",
    "VolumeProjection": "1 secret:KeyProjection, 2 downwardAPI:DownwardAPIProjection, 3 configMap:KeyProjection, "
    "4 serviceAccountToken:ServiceAccountTokenProjection, 5 clusterTrustBundle:-, "
    "6 podCertificate:-",
    "KeyProjection": "1 ^LocalObjectReference, 2 items*:KeyToPath, 4 optional?:b",  # Secret/ConfigMapProjection
    "DownwardAPIProjection": "1 items*:DownwardAPIVolumeFile",
    "ServiceAccountTokenProjection": "1 audience, 2 expirationSeconds?:i, 3 path",
    "ImageVolumeSource": "1 reference, 2 pullPolicy",
    # meta/v1 messages sent on their own or embedded in the kinds below
    "DeleteOptions": "1 gracePeriodSeconds?:i, 2 preconditions:Preconditions, 3 orphanDependents?:b, "
    "4 propagationPolicy?, 5 dryRun*, 6 ignoreStoreReadErrorWithClusterBreakingPotential?:b",
    "Preconditions": "1 uid?, 2 resourceVersion?",
    "Condition": "1 type, 2 status, 3 observedGeneration:i, 4 lastTransitionTime:t, 5 reason, 6 message",
    "ObjectReference": "1 kind, 2 namespace, 3 name, 4 uid, 5 apiVersion, 6 resourceVersion, 7 fieldPath",
    # core/v1 Event and events.k8s.io/v1 Event (the same object in two shapes)
    "CoreEvent": "1 metadata:ObjectMeta, 2 involvedObject:ObjectReference, 3 reason, 4 message, "
    "5 source:EventSource, 6 firstTimestamp:t, 7 lastTimestamp:t, 8 count:i, 9 type, 10 eventTime:mt, "
    "11 series:EventSeries, 12 action, 13 related:ObjectReference, 14 reportingComponent, "
    "15 reportingInstance",
    "EventsEvent": "1 metadata:ObjectMeta, 2 eventTime:mt, 3 series:EventSeries, 4 reportingController, "
    "5 reportingInstance, 6 action, 7 reason, 8 regarding:ObjectReference, 9 related:ObjectReference, "
    "10 note, 11 type, 12 deprecatedSource:EventSource, 13 deprecatedFirstTimestamp:t, "
    "14 deprecatedLastTimestamp:t, 15 deprecatedCount:i",
    "EventSeries": "1 count:i, 2 lastObservedTime:mt",
    "EventSource": "1 component, 2 host",
    # core/v1 Service, ServiceAccount, LimitRange
    "Service": "1 metadata:ObjectMeta, 2 spec:ServiceSpec, 3 status:ServiceStatus",
    "ServiceSpec": "1 ports*:ServicePort, 2 selector:{s}, 3 clusterIP, 4 type, 5 externalIPs*, 7 sessionAffinity, "
    "8 loadBalancerIP, 9 loadBalancerSourceRanges*, 10 externalName, 11 externalTrafficPolicy, "
    "12 healthCheckNodePort:i, 13 publishNotReadyAddresses:b, "
    "14 sessionAffinityConfig:SessionAffinityConfig, 17 ipFamilyPolicy?, 18 clusterIPs*, "
    "19 ipFamilies*, 20 allocateLoadBalancerNodePorts?:b, 21 loadBalancerClass?, "
    "22 internalTrafficPolicy?, 23 trafficDistribution?",
    "ServicePort": "1 name, 2 protocol, 3 port:i, 4 targetPort:ios, 5 nodePort:i, 6 appProtocol?",
    "SessionAffinityConfig": "1 clientIP:ClientIPConfig",
    "ClientIPConfig": "1 timeoutSeconds?:i",
    "ServiceStatus": "1 loadBalancer:LoadBalancerStatus, 2 conditions*:Condition",
    "LoadBalancerStatus": "1 ingress*:LoadBalancerIngress",
    "LoadBalancerIngress": "1 ip, 2 hostname, 3 ipMode?, 4 ports*:PortStatus",
    "PortStatus": "1 port:i, 2 protocol, 3 error?",
    "ServiceAccount": "1 metadata:ObjectMeta, 2 secrets*:ObjectReference, 3 imagePullSecrets*:LocalObjectReference, "
    "4 automountServiceAccountToken?:b",
    "LimitRange": "1 metadata:ObjectMeta, 2 spec:LimitRangeSpec",
    "LimitRangeSpec": "1 limits*:LimitRangeItem",
    "LimitRangeItem": "1 type, 2 max:{q}, 3 min:{q}, 4 default:{q}, 5 defaultRequest:{q}, 6 maxLimitRequestRatio:{q}",
    # apps/v1
    "Deployment": "1 metadata:ObjectMeta, 2 spec:DeploymentSpec, 3 status:DeploymentStatus",
    "DeploymentSpec": "1 replicas?:i, 2 selector:LabelSelector, 3 template:PodTemplateSpec, "
    "4 strategy:DeploymentStrategy, 5 minReadySeconds:i, 6 revisionHistoryLimit?:i, 7 paused:b, "
    "9 progressDeadlineSeconds?:i, 10 podReplacementPolicy?",
    "DeploymentStrategy": "1 type, 2 rollingUpdate:RollingUpdateDeployment",
    "RollingUpdateDeployment": "1 maxUnavailable:ios, 2 maxSurge:ios",
    "DeploymentStatus": "1 observedGeneration:i, 2 replicas:i, 3 updatedReplicas:i, 4 availableReplicas:i, "
    "5 unavailableReplicas:i, 6 conditions*:DeploymentCondition, 7 readyReplicas:i, "
    "8 collisionCount?:i, 9 terminatingReplicas?:i",
    "DeploymentCondition": "1 type, 2 status, 4 reason, 5 message, 6 lastUpdateTime:t, 7 lastTransitionTime:t",
    "StatefulSet": "1 metadata:ObjectMeta, 2 spec:StatefulSetSpec, 3 status:StatefulSetStatus",
    "StatefulSetSpec": "1 replicas?:i, 2 selector:LabelSelector, 3 template:PodTemplateSpec, "
    "4 volumeClaimTemplates*:PersistentVolumeClaim, 5 serviceName, 6 podManagementPolicy, "
    "7 updateStrategy:StatefulSetUpdateStrategy, 8 revisionHistoryLimit?:i, 9 minReadySeconds:i, "
    "10 persistentVolumeClaimRetentionPolicy:StatefulSetPVCRetentionPolicy, "
    "11 ordinals:StatefulSetOrdinals",
    "StatefulSetUpdateStrategy": "1 type, 2 rollingUpdate:RollingUpdateStatefulSetStrategy",
    "RollingUpdateStatefulSetStrategy": "1 partition?:i, 2 maxUnavailable:ios",
    "StatefulSetPVCRetentionPolicy": "1 whenDeleted, 2 whenScaled",
    "StatefulSetOrdinals": "1 start:i",
    "StatefulSetStatus": "1 observedGeneration:i, 2 replicas:i, 3 readyReplicas:i, 4 currentReplicas:i, "
    "5 updatedReplicas:i, 6 currentRevision, 7 updateRevision, 9 collisionCount?:i, "
    "10 conditions*:StatefulSetCondition, 11 availableReplicas:i",
    "StatefulSetCondition": "1 type, 2 status, 3 lastTransitionTime:t, 4 reason, 5 message",
    "PersistentVolumeClaim": "1 metadata:ObjectMeta, 2 spec:PersistentVolumeClaimSpec, 3 status:~",
    "PersistentVolumeClaimSpec": "1 accessModes*, 2 resources:VolumeResourceRequirements, 3 volumeName, "
    "4 selector:LabelSelector, 5 storageClassName?, 6 volumeMode?, "
    "7 dataSource:TypedLocalObjectReference, 8 dataSourceRef:TypedObjectReference, "
    "9 volumeAttributesClassName?",
    "VolumeResourceRequirements": "1 limits:{q}, 2 requests:{q}",
    "TypedLocalObjectReference": "1 apiGroup?, 2 kind, 3 name",
    "TypedObjectReference": "1 apiGroup?, 2 kind, 3 name, 4 namespace?",
    # node.k8s.io/v1, coordination.k8s.io/v1
    "RuntimeClass": "1 metadata:ObjectMeta, 2 handler, 3 overhead:Overhead, 4 scheduling:Scheduling",
    "Overhead": "1 podFixed:{q}",
    "Scheduling": "1 nodeSelector:{s}, 2 tolerations*:Toleration",
    "Lease": "1 metadata:ObjectMeta, 2 spec:LeaseSpec",
    "LeaseSpec": "1 holderIdentity?, 2 leaseDurationSeconds?:i, 3 acquireTime:mt, 4 renewTime:mt, "
    "5 leaseTransitions?:i, 6 strategy?, 7 preferredHolder?",
    # rbac.authorization.k8s.io/v1
    "Role": "1 metadata:ObjectMeta, 2 rules*:PolicyRule",
    "ClusterRole": "1 metadata:ObjectMeta, 2 rules*:PolicyRule, 3 aggregationRule:AggregationRule",
    "AggregationRule": "1 clusterRoleSelectors*:LabelSelector",
    "PolicyRule": "1 verbs*, 2 apiGroups*, 3 resources*, 4 resourceNames*, 5 nonResourceURLs*",
    "RoleBinding": "1 metadata:ObjectMeta, 2 subjects*:Subject, 3 roleRef:RoleRef",
    "Subject": "1 kind, 2 apiGroup, 3 name, 4 namespace",
    "RoleRef": "1 apiGroup, 2 kind, 3 name",
    # admissionregistration.k8s.io/v1
    "MutatingWebhookConfiguration": "1 metadata:ObjectMeta, 2 webhooks*:MutatingWebhook",
    "ValidatingWebhookConfiguration": "1 metadata:ObjectMeta, 2 webhooks*:ValidatingWebhook",
    "MutatingWebhook": "1 name, 2 clientConfig:WebhookClientConfig, 3 rules*:RuleWithOperations, 4 failurePolicy?, "
    "5 namespaceSelector:LabelSelector, 6 sideEffects?, 7 timeoutSeconds?:i, "
    "8 admissionReviewVersions*, 9 matchPolicy?, 10 reinvocationPolicy?, "
    "11 objectSelector:LabelSelector, 12 matchConditions*:MatchCondition",
    "ValidatingWebhook": "1 name, 2 clientConfig:WebhookClientConfig, 3 rules*:RuleWithOperations, "
    "4 failurePolicy?, 5 namespaceSelector:LabelSelector, 6 sideEffects?, 7 timeoutSeconds?:i, "
    "8 admissionReviewVersions*, 9 matchPolicy?, 10 objectSelector:LabelSelector, "
    "11 matchConditions*:MatchCondition",
    "WebhookClientConfig": "1 service:ServiceReference, 2 caBundle:y, 3 url?",
    "ServiceReference": "1 namespace, 2 name, 3 path?, 4 port?:i",
    "RuleWithOperations": "1 operations*, 2 ^AdmissionRule",
    "AdmissionRule": "1 apiGroups*, 2 apiVersions*, 3 resources*, 4 scope?",
    "MatchCondition": "1 name, 2 expression",
    # discovery.k8s.io/v1
    "EndpointSlice": "1 metadata:ObjectMeta, 2 endpoints*:Endpoint, 3 ports*:EndpointPort, 4 addressType",
    "Endpoint": "1 addresses*, 2 conditions:EndpointConditions, 3 hostname?, 4 targetRef:ObjectReference, "
    "5 deprecatedTopology:{s}, 6 nodeName?, 7 zone?, 8 hints:EndpointHints",
    "EndpointConditions": "1 ready?:b, 2 serving?:b, 3 terminating?:b",
    "EndpointHints": "1 forZones*:ForZone, 2 forNodes*:ForZone",  # ForNode has ForZone's layout
    "ForZone": "1 name",
    "EndpointPort": "1 name?, 2 protocol?, 3 port?:i, 4 appProtocol?",
    # authentication.k8s.io/v1 and authorization.k8s.io/v1: the reviews (never stored); ExtraValue maps
    # are not decoded (kubectl and controller-runtime send none)
    "TokenReview": "1 metadata:ObjectMeta, 2 spec:TokenReviewSpec, 3 status:TokenReviewStatus",
    "TokenReviewSpec": "1 token, 2 audiences*",
    "TokenReviewStatus": "1 authenticated:b, 2 user:UserInfo, 3 error, 4 audiences*",
    "UserInfo": "1 username, 2 uid, 3 groups*, 4 extra:-",
    "SelfSubjectReview": "1 metadata:ObjectMeta, 2 status:SelfSubjectReviewStatus",
    "SelfSubjectReviewStatus": "1 userInfo:UserInfo",
    "SubjectAccessReview": "1 metadata:ObjectMeta, 2 spec:SubjectAccessReviewSpec, 3 status:SubjectAccessReviewStatus",
    "SubjectAccessReviewSpec": "1 resourceAttributes:ResourceAttributes, "
    "2 nonResourceAttributes:NonResourceAttributes, 3 user, 4 groups*, 5 extra:-, 6 uid",
    "SelfSubjectAccessReview": "1 metadata:ObjectMeta, 2 spec:SelfSubjectAccessReviewSpec, "
    "3 status:SubjectAccessReviewStatus",
    "SelfSubjectAccessReviewSpec": "1 resourceAttributes:ResourceAttributes, "
    "2 nonResourceAttributes:NonResourceAttributes",
    "ResourceAttributes": "1 namespace, 2 verb, 3 group, 4 version, 5 resource, 6 subresource, 7 name, "
    "8 fieldSelector:SelectorAttributes, 9 labelSelector:SelectorAttributes",
    "SelectorAttributes": "1 rawSelector, 2 requirements*:LabelSelectorRequirement",  # field's has the same layout
    "NonResourceAttributes": "1 path, 2 verb",
    "SubjectAccessReviewStatus": "1 allowed?:b, 2 reason, 3 evaluationError, 4 denied:b",
    "SelfSubjectRulesReview": "1 metadata:ObjectMeta, 2 spec:SelfSubjectRulesReviewSpec, "
    "3 status:SubjectRulesReviewStatus",
    "SelfSubjectRulesReviewSpec": "1 namespace",
    "SubjectRulesReviewStatus": "1 resourceRules*:ResourceRule, 2 nonResourceRules*:NonResourceRule, "
    "3 incomplete?:b, 4 evaluationError",
    "ResourceRule": "1 verbs*, 2 apiGroups*, 3 resources*, 4 resourceNames*",
    "NonResourceRule": "1 verbs*, 2 nonResourceURLs*",
}

KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "Pod"): "Pod",
    ("batch/v1", "Job"): "Job",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("v1", "Event"): "CoreEvent",
    ("events.k8s.io/v1", "Event"): "EventsEvent",
    ("v1", "Service"): "Service",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "LimitRange"): "LimitRange",
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "StatefulSet"): "StatefulSet",
    ("node.k8s.io/v1", "RuntimeClass"): "RuntimeClass",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "RoleBinding",  # the same layout
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"): "MutatingWebhookConfiguration",
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): "ValidatingWebhookConfiguration",
    ("discovery.k8s.io/v1", "EndpointSlice"): "EndpointSlice",
}
"""(apiVersion, kind) of an object client-go may send as protobuf -> its message in :data:`LAYOUT`."""

REVIEW_KINDS: dict[tuple[str, str], str] = {
    ("authentication.k8s.io/v1", "TokenReview"): "TokenReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io/v1", "SubjectAccessReview"): "SubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
}
"""The reviews client-go's typed clients send as protobuf (``kubectl auth can-i`` and ``whoami`` do):
decoded only on their own endpoints (:mod:`pykueue.apiserver.access_reviews`), never as stored kinds."""
