locals {
  cluster_name                      = "golden-shared6.example.org"
  master_autoscaling_group_ids      = [aws_autoscaling_group.cp-masters-golden-shared6-example-org.id]
  master_security_group_ids         = [aws_security_group.masters-golden-shared6-example-org.id]
  masters_role_arn                  = aws_iam_role.masters-golden-shared6-example-org.arn
  masters_role_name                 = aws_iam_role.masters-golden-shared6-example-org.name
  node_autoscaling_group_ids        = [aws_autoscaling_group.nodes-golden-shared6-example-org.id]
  node_security_group_ids           = [aws_security_group.nodes-golden-shared6-example-org.id]
  node_subnet_ids                   = [aws_subnet.eu-west-9a-golden-shared6-example-org.id]
  nodes_role_arn                    = aws_iam_role.nodes-golden-shared6-example-org.arn
  nodes_role_name                   = aws_iam_role.nodes-golden-shared6-example-org.name
  region                            = "eu-west-9"
  route_table_private-eu-west-9a_id = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
  route_table_public_id             = aws_route_table.golden-shared6-example-org.id
  subnet_eu-west-9a_id              = aws_subnet.eu-west-9a-golden-shared6-example-org.id
  subnet_utility-eu-west-9a_id      = aws_subnet.utility-eu-west-9a-golden-shared6-example-org.id
  vpc_cidr_block                    = data.aws_vpc.golden-shared6-example-org.cidr_block
  vpc_id                            = "vpc-0feedface"
  vpc_ipv6_cidr_block               = data.aws_vpc.golden-shared6-example-org.ipv6_cidr_block
  vpc_ipv6_cidr_length              = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

output "cluster_name" {
  value = "golden-shared6.example.org"
}

output "master_autoscaling_group_ids" {
  value = [aws_autoscaling_group.cp-masters-golden-shared6-example-org.id]
}

output "master_security_group_ids" {
  value = [aws_security_group.masters-golden-shared6-example-org.id]
}

output "masters_role_arn" {
  value = aws_iam_role.masters-golden-shared6-example-org.arn
}

output "masters_role_name" {
  value = aws_iam_role.masters-golden-shared6-example-org.name
}

output "node_autoscaling_group_ids" {
  value = [aws_autoscaling_group.nodes-golden-shared6-example-org.id]
}

output "node_security_group_ids" {
  value = [aws_security_group.nodes-golden-shared6-example-org.id]
}

output "node_subnet_ids" {
  value = [aws_subnet.eu-west-9a-golden-shared6-example-org.id]
}

output "nodes_role_arn" {
  value = aws_iam_role.nodes-golden-shared6-example-org.arn
}

output "nodes_role_name" {
  value = aws_iam_role.nodes-golden-shared6-example-org.name
}

output "region" {
  value = "eu-west-9"
}

output "route_table_private-eu-west-9a_id" {
  value = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
}

output "route_table_public_id" {
  value = aws_route_table.golden-shared6-example-org.id
}

output "subnet_eu-west-9a_id" {
  value = aws_subnet.eu-west-9a-golden-shared6-example-org.id
}

output "subnet_utility-eu-west-9a_id" {
  value = aws_subnet.utility-eu-west-9a-golden-shared6-example-org.id
}

output "vpc_cidr_block" {
  value = data.aws_vpc.golden-shared6-example-org.cidr_block
}

output "vpc_id" {
  value = "vpc-0feedface"
}

output "vpc_ipv6_cidr_block" {
  value = data.aws_vpc.golden-shared6-example-org.ipv6_cidr_block
}

output "vpc_ipv6_cidr_length" {
  value = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

provider "aws" {
  region = "eu-west-9"
}

provider "aws" {
  alias  = "files"
  region = "eu-west-9"
}

resource "aws_autoscaling_group" "cp-masters-golden-shared6-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.cp-masters-golden-shared6-example-org.id
    version = aws_launch_template.cp-masters-golden-shared6-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "cp.masters.golden-shared6.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-shared6.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "cp.masters.golden-shared6.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/control-plane"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "k8s.io/role/master"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "cp"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-shared6.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  target_group_arns   = [aws_lb_target_group.tcp-golden-shared6-exampl-jchho1.id]
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-shared6-example-org.id]
}

resource "aws_autoscaling_group" "nodes-golden-shared6-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.nodes-golden-shared6-example-org.id
    version = aws_launch_template.nodes-golden-shared6-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 2
  metrics_granularity   = "1Minute"
  min_size              = 2
  name                  = "nodes.golden-shared6.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-shared6.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "nodes.golden-shared6.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/node"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "nodes"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-shared6.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-shared6-example-org.id]
}

resource "aws_autoscaling_lifecycle_hook" "cp-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.cp-masters-golden-shared6-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "cp-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "nodes-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.nodes-golden-shared6-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "nodes-NTHLifecycleHook"
}

resource "aws_cloudwatch_event_rule" "golden-shared6-example-org-ASGLifecycle" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared6.example.org-ASGLifecycle_event_pattern")
  name          = "golden-shared6.example.org-ASGLifecycle"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6.example.org-ASGLifecycle"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared6-example-org-InstanceScheduledChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared6.example.org-InstanceScheduledChange_event_pattern")
  name          = "golden-shared6.example.org-InstanceScheduledChange"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6.example.org-InstanceScheduledChange"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared6-example-org-InstanceStateChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared6.example.org-InstanceStateChange_event_pattern")
  name          = "golden-shared6.example.org-InstanceStateChange"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6.example.org-InstanceStateChange"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared6-example-org-SpotInterruption" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared6.example.org-SpotInterruption_event_pattern")
  name          = "golden-shared6.example.org-SpotInterruption"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6.example.org-SpotInterruption"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_target" "golden-shared6-example-org-ASGLifecycle-Target" {
  arn  = aws_sqs_queue.golden-shared6-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared6-example-org-ASGLifecycle.id
}

resource "aws_cloudwatch_event_target" "golden-shared6-example-org-InstanceScheduledChange-Target" {
  arn  = aws_sqs_queue.golden-shared6-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared6-example-org-InstanceScheduledChange.id
}

resource "aws_cloudwatch_event_target" "golden-shared6-example-org-InstanceStateChange-Target" {
  arn  = aws_sqs_queue.golden-shared6-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared6-example-org-InstanceStateChange.id
}

resource "aws_cloudwatch_event_target" "golden-shared6-example-org-SpotInterruption-Target" {
  arn  = aws_sqs_queue.golden-shared6-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared6-example-org-SpotInterruption.id
}

resource "aws_ebs_volume" "a-etcd-events-golden-shared6-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "a.etcd-events.golden-shared6.example.org"
    "k8s.io/etcd/events"                               = "a/a"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "a-etcd-main-golden-shared6-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "a.etcd-main.golden-shared6.example.org"
    "k8s.io/etcd/main"                                 = "a/a"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_eip" "eu-west-9a-golden-shared6-example-org" {
  domain = "vpc"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "eu-west-9a.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "masters-golden-shared6-example-org" {
  name = "masters.golden-shared6.example.org"
  role = aws_iam_role.masters-golden-shared6-example-org.name
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "masters.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "nodes-golden-shared6-example-org" {
  name = "nodes.golden-shared6.example.org"
  role = aws_iam_role.nodes-golden-shared6-example-org.name
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "nodes.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_iam_role" "masters-golden-shared6-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_masters.golden-shared6.example.org_policy")
  name               = "masters.golden-shared6.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "masters.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_iam_role" "nodes-golden-shared6-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_nodes.golden-shared6.example.org_policy")
  name               = "nodes.golden-shared6.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "nodes.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_iam_role_policy" "masters-golden-shared6-example-org" {
  name   = "masters.golden-shared6.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_masters.golden-shared6.example.org_policy")
  role   = aws_iam_role.masters-golden-shared6-example-org.name
}

resource "aws_iam_role_policy" "nodes-golden-shared6-example-org" {
  name   = "nodes.golden-shared6.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_nodes.golden-shared6.example.org_policy")
  role   = aws_iam_role.nodes-golden-shared6-example-org.name
}

resource "aws_launch_template" "cp-masters-golden-shared6-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 64
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.masters-golden-shared6-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "enabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "cp.masters.golden-shared6.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 1
    security_groups             = [aws_security_group.masters-golden-shared6-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared6.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared6.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared6.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared6.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared6.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared6.example.org"                                                      = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-shared6.example.org"
    "Name"                                                                                                  = "cp.masters.golden-shared6.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "cp"
    "kubernetes.io/cluster/golden-shared6.example.org"                                                      = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_cp.masters.golden-shared6.example.org_user_data")
}

resource "aws_launch_template" "nodes-golden-shared6-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 128
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.nodes-golden-shared6-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "enabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "nodes.golden-shared6.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 1
    security_groups             = [aws_security_group.nodes-golden-shared6-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared6.example.org"
      "Name"                                                                       = "nodes.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared6.example.org"                           = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared6.example.org"
      "Name"                                                                       = "nodes.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared6.example.org"                           = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared6.example.org"
      "Name"                                                                       = "nodes.golden-shared6.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared6.example.org"                           = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                          = "golden-shared6.example.org"
    "Name"                                                                       = "nodes.golden-shared6.example.org"
    "aws-node-termination-handler/managed"                                       = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
    "k8s.io/role/node"                                                           = "1"
    "kops.k8s.io/instancegroup"                                                  = "nodes"
    "kubernetes.io/cluster/golden-shared6.example.org"                           = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_nodes.golden-shared6.example.org_user_data")
}

resource "aws_lb" "api-golden-shared6-example-org" {
  enable_cross_zone_load_balancing = false
  internal                         = false
  ip_address_type                  = "dualstack"
  load_balancer_type               = "network"
  name                             = "api-golden-shared6-exampl-t6k90i"
  security_groups                  = [aws_security_group.api-elb-golden-shared6-example-org.id]
  subnet_mapping {
    subnet_id = aws_subnet.utility-eu-west-9a-golden-shared6-example-org.id
  }
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "api.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_lb_listener" "api-golden-shared6-example-org-443" {
  default_action {
    target_group_arn = aws_lb_target_group.tcp-golden-shared6-exampl-jchho1.id
    type             = "forward"
  }
  load_balancer_arn = aws_lb.api-golden-shared6-example-org.id
  port              = 443
  protocol          = "TCP"
}

resource "aws_lb_target_group" "tcp-golden-shared6-exampl-jchho1" {
  connection_termination = "true"
  deregistration_delay   = "30"
  health_check {
    healthy_threshold   = 2
    interval            = 10
    protocol            = "TCP"
    unhealthy_threshold = 2
  }
  name     = "tcp-golden-shared6-exampl-jchho1"
  port     = 443
  protocol = "TCP"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "tcp-golden-shared6-exampl-jchho1"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_nat_gateway" "eu-west-9a-golden-shared6-example-org" {
  allocation_id = aws_eip.eu-west-9a-golden-shared6-example-org.id
  subnet_id     = aws_subnet.utility-eu-west-9a-golden-shared6-example-org.id
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "eu-west-9a.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_route" "route-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = "igw-0shared"
  route_table_id         = aws_route_table.golden-shared6-example-org.id
}

resource "aws_route" "route-__--0" {
  destination_ipv6_cidr_block = "::/0"
  gateway_id                  = "igw-0shared"
  route_table_id              = aws_route_table.golden-shared6-example-org.id
}

resource "aws_route" "route-private-eu-west-9a-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.eu-west-9a-golden-shared6-example-org.id
  route_table_id         = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
}

resource "aws_route" "route-private-eu-west-9a-64_ff9b__--96" {
  destination_ipv6_cidr_block = "64:ff9b::/96"
  nat_gateway_id              = aws_nat_gateway.eu-west-9a-golden-shared6-example-org.id
  route_table_id              = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
}

resource "aws_route" "route-private-eu-west-9a-__--0" {
  destination_ipv6_cidr_block = "::/0"
  egress_only_gateway_id      = "eigw-0shared"
  route_table_id              = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
}

resource "aws_route53_record" "api-golden-shared6-example-org" {
  alias {
    evaluate_target_health = false
    name                   = aws_lb.api-golden-shared6-example-org.dns_name
    zone_id                = aws_lb.api-golden-shared6-example-org.zone_id
  }
  name    = "api.golden-shared6.example.org"
  type    = "A"
  zone_id = "/hostedzone/ZGOLDEN"
}

resource "aws_route53_record" "api-golden-shared6-example-org-AAAA" {
  alias {
    evaluate_target_health = false
    name                   = aws_lb.api-golden-shared6-example-org.dns_name
    zone_id                = aws_lb.api-golden-shared6-example-org.zone_id
  }
  name    = "api.golden-shared6.example.org"
  type    = "AAAA"
  zone_id = "/hostedzone/ZGOLDEN"
}

resource "aws_route_table" "golden-shared6-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
    "kubernetes.io/kops/role"                          = "public"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_route_table" "private-eu-west-9a-golden-shared6-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "private-eu-west-9a.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
    "kubernetes.io/kops/role"                          = "private-eu-west-9a"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_route_table_association" "private-eu-west-9a-golden-shared6-example-org" {
  route_table_id = aws_route_table.private-eu-west-9a-golden-shared6-example-org.id
  subnet_id      = aws_subnet.eu-west-9a-golden-shared6-example-org.id
}

resource "aws_route_table_association" "utility-eu-west-9a-golden-shared6-example-org" {
  route_table_id = aws_route_table.golden-shared6-example-org.id
  subnet_id      = aws_subnet.utility-eu-west-9a-golden-shared6-example-org.id
}

resource "aws_s3_object" "cluster-completed-spec" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_cluster-completed.spec_content")
  key                    = "golden-shared6.example.org/cluster-completed.spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-events" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-events_content")
  key                    = "golden-shared6.example.org/backups/etcd/events/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-main" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-main_content")
  key                    = "golden-shared6.example.org/backups/etcd/main/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-aws-cloud-controller-addons-k8s-io-k8s-1-18" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-aws-cloud-controller.addons.k8s.io-k8s-1.18_content")
  key                    = "golden-shared6.example.org/addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-aws-ebs-csi-driver-addons-k8s-io-k8s-1-17" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-aws-ebs-csi-driver.addons.k8s.io-k8s-1.17_content")
  key                    = "golden-shared6.example.org/addons/aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-bootstrap" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-bootstrap_content")
  key                    = "golden-shared6.example.org/addons/bootstrap-channel.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-coredns-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-coredns.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-shared6.example.org/addons/coredns.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-dns-controller-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-dns-controller.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-shared6.example.org/addons/dns-controller.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-kops-controller-addons-k8s-io-k8s-1-16" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-kops-controller.addons.k8s.io-k8s-1.16_content")
  key                    = "golden-shared6.example.org/addons/kops-controller.addons.k8s.io/k8s-1.16.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-kubelet-api-rbac-addons-k8s-io-k8s-1-9" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-kubelet-api.rbac.addons.k8s.io-k8s-1.9_content")
  key                    = "golden-shared6.example.org/addons/kubelet-api.rbac.addons.k8s.io/k8s-1.9.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-limit-range-addons-k8s-io" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-limit-range.addons.k8s.io_content")
  key                    = "golden-shared6.example.org/addons/limit-range.addons.k8s.io/v1.5.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-node-termination-handler-aws-k8s-1-11" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-node-termination-handler.aws-k8s-1.11_content")
  key                    = "golden-shared6.example.org/addons/node-termination-handler.aws/k8s-1.11.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared6-example-org-addons-storage-aws-addons-k8s-io-v1-15-0" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared6.example.org-addons-storage-aws.addons.k8s.io-v1.15.0_content")
  key                    = "golden-shared6.example.org/addons/storage-aws.addons.k8s.io/v1.15.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "kops-version-txt" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_kops-version.txt_content")
  key                    = "golden-shared6.example.org/kops-version.txt"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-channels-kops-channels" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-channels-kops-channels_content")
  key                    = "golden-shared6.example.org/manifests/channels/kops-channels.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-cp_content")
  key                    = "golden-shared6.example.org/manifests/etcd/events-cp.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-cp_content")
  key                    = "golden-shared6.example.org/manifests/etcd/main-cp.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-static-kube-apiserver-healthcheck" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
  key                    = "golden-shared6.example.org/manifests/static/kube-apiserver-healthcheck.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-cp_content")
  key                    = "golden-shared6.example.org/igconfig/control-plane/cp/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-nodes" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-nodes_content")
  key                    = "golden-shared6.example.org/igconfig/node/nodes/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_security_group" "api-elb-golden-shared6-example-org" {
  description = "Security group for api ELB"
  name        = "api-elb.golden-shared6.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "api-elb.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_security_group" "masters-golden-shared6-example-org" {
  description = "Security group for masters"
  name        = "masters.golden-shared6.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "masters.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_security_group" "nodes-golden-shared6-example-org" {
  description = "Security group for nodes"
  name        = "nodes.golden-shared6.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "nodes.golden-shared6.example.org"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-22to22-masters-golden-shared6-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-22to22-nodes-golden-shared6-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-443to443-api-elb-golden-shared6-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 443
  protocol          = "tcp"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = 443
  type              = "ingress"
}

resource "aws_security_group_rule" "from-__--0-ingress-tcp-22to22-masters-golden-shared6-example-org" {
  from_port         = 22
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-__--0-ingress-tcp-22to22-nodes-golden-shared6-example-org" {
  from_port         = 22
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "tcp"
  security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-__--0-ingress-tcp-443to443-api-elb-golden-shared6-example-org" {
  from_port         = 443
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "tcp"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = 443
  type              = "ingress"
}

resource "aws_security_group_rule" "from-api-elb-golden-shared6-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-api-elb-golden-shared6-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-shared6-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-shared6-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-shared6-example-org-ingress-all-0to0-masters-golden-shared6-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-shared6-example-org-ingress-all-0to0-nodes-golden-shared6-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-ingress-all-0to0-nodes-golden-shared6-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-ingress-tcp-1to2379-masters-golden-shared6-example-org" {
  from_port                = 1
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port                  = 2379
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-ingress-tcp-2382to4000-masters-golden-shared6-example-org" {
  from_port                = 2382
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port                  = 4000
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-ingress-tcp-4003to65535-masters-golden-shared6-example-org" {
  from_port                = 4003
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared6-example-org-ingress-udp-1to65535-masters-golden-shared6-example-org" {
  from_port                = 1
  protocol                 = "udp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared6-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "https-elb-to-master" {
  from_port                = 443
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port                  = 443
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-api-elb-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 3
  protocol          = "icmp"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = 4
  type              = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-cp-to-elb" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.api-elb-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.masters-golden-shared6-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-elb-to-cp" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.masters-golden-shared6-example-org.id
  source_security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmpv6-pmtu-api-elb-__--0" {
  from_port         = -1
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "icmpv6"
  security_group_id = aws_security_group.api-elb-golden-shared6-example-org.id
  to_port           = -1
  type              = "ingress"
}

resource "aws_sqs_queue" "golden-shared6-example-org-nth" {
  message_retention_seconds = 300
  name                      = "golden-shared6-example-org-nth"
  policy                    = file("${path.module}/data/aws_sqs_queue_golden-shared6-example-org-nth_policy")
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "golden-shared6-example-org-nth"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
}

resource "aws_subnet" "eu-west-9a-golden-shared6-example-org" {
  assign_ipv6_address_on_creation                = true
  availability_zone                              = "eu-west-9a"
  enable_dns64                                   = true
  enable_resource_name_dns_aaaa_record_on_launch = true
  ipv6_cidr_block                                = "2001:db8:0:111::/64"
  ipv6_native                                    = true
  private_dns_hostname_type_on_launch            = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "eu-west-9a.golden-shared6.example.org"
    "SubnetType"                                       = "Private"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_subnet" "utility-eu-west-9a-golden-shared6-example-org" {
  assign_ipv6_address_on_creation                = true
  availability_zone                              = "eu-west-9a"
  cidr_block                                     = "10.60.0.0/22"
  enable_resource_name_dns_a_record_on_launch    = true
  enable_resource_name_dns_aaaa_record_on_launch = true
  ipv6_cidr_block                                = "2001:db8:0:112::/64"
  private_dns_hostname_type_on_launch            = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-shared6.example.org"
    "Name"                                             = "utility-eu-west-9a.golden-shared6.example.org"
    "SubnetType"                                       = "Utility"
    "kubernetes.io/cluster/golden-shared6.example.org" = "owned"
    "kubernetes.io/role/elb"                           = "1"
  }
  vpc_id = "vpc-0feedface"
}

terraform {
  required_version = ">= 0.15.0"
  required_providers {
    aws = {
      "configuration_aliases" = [aws.files]
      "source"                = "hashicorp/aws"
      "version"               = ">= 5.0.0"
    }
  }
}
